package facts

import (
	"math"
	"testing"
)

// TestOpModels checks the FLOP and byte models against hand-computed
// values, one case per op kind, forward and backward.
func TestOpModels(t *testing.T) {
	const bf, f32, h = "c10::BFloat16", "float", "c10::Half"
	for _, c := range []struct {
		name, op, dims, types, concrete string
		kind                            string
		flops, bytes                    float64
		tiles                           int64
		causal                          bool
	}{
		// 2 M N K; bytes 2 (M K + K N + M N); 128x128 tiles 2 x 4.
		{"the issue's thin GEMM", "aten::mm", "[256,131072],[131072,512]", bf + "|" + bf, "", kindGEMM, 2 * 256 * 512 * 131072, 2 * (256*131072 + 131072*512 + 256*512), 8, false},
		// bias [512] adds 4 * 512 bytes.
		{"addmm with a bias", "aten::addmm", "[512],[64,1024],[1024,512],[],[]", f32 + "|" + f32 + "|" + f32 + "|Scalar|Scalar", "", kindGEMM, 2 * 64 * 512 * 1024, 4*(64*1024+1024*512+64*512) + 4*512, 4, false},
		{"bmm", "aten::bmm", "[8,128,64],[8,64,256]", h + "|" + h, "", kindGEMM, 2 * 8 * 128 * 256 * 64, 2 * (8*128*64 + 8*64*256 + 8*128*256), 16, false},
		{"baddbmm reads its input too", "aten::baddbmm", "[8,128,256],[8,128,64],[8,64,256],[],[]", h + "|" + h + "|" + h + "|Scalar|Scalar", "", kindGEMM, 2 * 8 * 128 * 256 * 64, 2*(8*128*64+8*64*256+8*128*256) + 2*8*128*256, 16, false},
		// M = 4 x 100 rows.
		{"linear over a 3-D input", "aten::linear", "[4,100,768],[3072,768],[3072]", bf + "|" + bf + "|" + bf, "", kindGEMM, 2 * 400 * 3072 * 768, 2*(400*768+3072*768+400*3072) + 2*3072, 4 * 24, false},
		{"batched matmul", "aten::matmul", "[2,12,64,32],[2,12,32,64]", f32 + "|" + f32, "", kindGEMM, 2 * 24 * 64 * 64 * 32, 4 * 24 * (64*32 + 32*64 + 64*64), 24, false},
		{"matmul of a 3-D input by a matrix", "aten::matmul", "[10,20,30],[30,40]", f32 + "|" + f32, "", kindGEMM, 2 * 200 * 40 * 30, 4 * (200*30 + 30*40 + 200*40), 2, false},
		{"matmul of a vector", "aten::matmul", "[30],[30,40]", f32 + "|" + f32, "", kindGEMM, 2 * 40 * 30, 4 * (30 + 30*40 + 40), 1, false},
		// ResNet's stem: 224 -> 112 with stride 2, padding 3: 2 N Cout 112^2 Cin 7^2.
		{"strided conv2d", "aten::conv2d", "[32,3,224,224],[64,3,7,7],[64],[],[],[],[]", f32 + "|" + f32 + "|" + f32 + "|ScalarList|ScalarList|ScalarList|Scalar", "|||[2, 2]|[3, 3]|[1, 1]|1", kindConvFwd,
			2 * 32 * 64 * 112 * 112 * 3 * 49, 4 * (32*3*224*224 + 64*3*49 + 64 + 32*64*112*112), 3136, false},
		{"convolution without concrete inputs keeps the input size", "aten::convolution", "[2,64,56,56],[128,64,3,3],[],[],[],[],[],[],[]", bf + "|" + bf, "", kindConvFwd,
			2 * 2 * 128 * 56 * 56 * 64 * 9, 2 * (2*64*56*56 + 128*64*9 + 2*128*56*56), 49, false},
		{"grouped conv2d counts C/groups", "aten::conv2d", "[8,64,32,32],[64,1,3,3],[],[],[],[],[]", bf + "|" + bf, "|||[1, 1]|[1, 1]|[1, 1]|64", kindConvFwd,
			2 * 8 * 64 * 32 * 32 * 1 * 9, 2 * (8*64*32*32 + 64*9 + 8*64*32*32), 64, false},
		// The first layer needs no input gradient: one forward's FLOPs.
		{"conv backward, weight gradient only", "aten::convolution_backward", "[32,64,112,112],[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[],[]", f32 + "|" + f32 + "|" + f32, "||||||||||[False, True, True]", kindConvBwd,
			2 * 32 * 64 * 112 * 112 * 3 * 49, 4 * (32*64*112*112 + 2*32*3*224*224 + 2*64*3*49), 3136, false},
		{"conv backward without the mask computes both gradients", "aten::convolution_backward", "[32,64,112,112],[32,3,224,224],[64,3,7,7]", f32 + "|" + f32 + "|" + f32, "", kindConvBwd,
			2 * 2 * 32 * 64 * 112 * 112 * 3 * 49, 4 * (32*64*112*112 + 2*32*3*224*224 + 2*64*3*49), 3136, false},
		// 4 B H S^2 D; bytes q, k, v, out.
		{"sdpa forward", "aten::scaled_dot_product_attention", "[8,16,4096,128],[8,16,4096,128],[8,16,4096,128],[],[],[],[],[]", bf + "|" + bf + "|" + bf + "||Scalar|Scalar||Scalar", "|||||False||False", kindAttnFwd,
			4 * 8 * 16 * 4096 * 4096 * 128, 2 * 4 * 8 * 16 * 4096 * 128, 8 * 16 * 32, false},
		{"causal sdpa does half", "aten::scaled_dot_product_attention", "[1,32,32768,128],[1,32,32768,128],[1,32,32768,128],[]", bf + "|" + bf + "|" + bf, "|||||True", kindAttnFwd,
			2 * 32 * 32768 * 32768 * 128, 2 * 4 * 32 * 32768 * 128, 32 * 256, true},
		{"flash attention forward in B S H D layout", "aten::_flash_attention_forward", "[8,4096,16,128],[8,4096,16,128],[8,4096,16,128],[],[]", bf + "|" + bf + "|" + bf, "", kindAttnFwd,
			4 * 8 * 16 * 4096 * 4096 * 128, 2 * 4 * 8 * 16 * 4096 * 128, 8 * 16 * 32, false},
		// Backward: 2.5x the forward FLOPs; reads grad_out q k v out, writes dq dk dv.
		{"flash attention backward", "aten::_scaled_dot_product_flash_attention_backward", "[8,16,4096,128],[8,16,4096,128],[8,16,4096,128],[8,16,4096,128],[8,16,4096,128],[8,16,4096]", bf + "|" + bf + "|" + bf + "|" + bf + "|" + bf + "|float", "", kindAttnBwd,
			2.5 * 4 * 8 * 16 * 4096 * 4096 * 128, 2 * 8 * 8 * 16 * 4096 * 128, 8 * 16 * 32, false},
		{"softmax reads and writes", "aten::_softmax", "[64,1000],[],[]", f32 + "|Scalar|Scalar", "", kindSoftmax, 0, 2 * 4 * 64 * 1000, 0, false},
		{"softmax backward reads two", "aten::_softmax_backward_data", "[64,1000],[64,1000],[],[]", f32 + "|" + f32 + "|Scalar|Scalar", "", kindSoftmax, 0, 3 * 4 * 64 * 1000, 0, false},
		{"layer norm", "aten::layer_norm", "[4,128,768],[],[768],[768],[],[]", bf + "|ScalarList|" + bf + "|" + bf + "|Scalar|Scalar", "", kindNorm, 0, 2 * (2*4*128*768 + 2*768), 0, false},
		{"broadcast add", "aten::add", "[4,128,768],[768],[]", bf + "|" + bf + "|Scalar", "", kindElementwise, 0, 2 * (2*4*128*768 + 768), 0, false},
		{"inductor pointwise kernel", "triton_poi_fused_add_3", "[8,4096,2048],[8,4096,2048],[]", bf + "|" + bf + "|Scalar", "", kindFusedPointwise, 0, 2 * 2 * 8 * 4096 * 2048, 0, false},
	} {
		a := newOpArgs(c.dims, c.types, c.concrete)
		got, ok := modelOp(c.op, &a)
		if !ok {
			t.Errorf("%s: %s not modelled", c.name, c.op)
			continue
		}
		want := c.kind
		if got.kind != want || got.flops != c.flops || math.Abs(got.bytes-c.bytes) > 0.5 || got.tiles != c.tiles || got.causal != c.causal {
			t.Errorf("%s: got kind %s flops %.0f bytes %.0f tiles %d causal %v, want %s %.0f %.0f %d %v",
				c.name, got.kind, got.flops, got.bytes, got.tiles, got.causal, want, c.flops, c.bytes, c.tiles, c.causal)
		}
	}
}

// TestOpModelsRefuse checks shapes that do not fit a model are not modelled.
func TestOpModelsRefuse(t *testing.T) {
	for _, c := range []struct{ op, dims, types string }{
		{"aten::mm", "[256,100],[99,512]", "float|float"},            // K disagrees
		{"aten::mm", "?,[99,512]", "float|float"},                    // a TensorList
		{"aten::bmm", "[2,4,8],[3,8,4]", "float|float"},              // batch disagrees
		{"aten::linear", "[4,16],[8,15]", "float|float"},             // K disagrees
		{"aten::scaled_dot_product_attention", "[4,16,64]", "float"}, // 3-D (varlen)
		{"aten::conv2d", "[1,3,8,8],[4,3,3,3]", "Scalar|float"},      // no tensor dtype
		{"aten::relu", "", ""},
		{"aten::view", "[4,4],[]", "float|ScalarList"}, // not modelled
	} {
		a := newOpArgs(c.dims, c.types, "")
		if got, ok := modelOp(c.op, &a); ok && got.bytes > 0 {
			t.Errorf("%s %s: modelled as %+v", c.op, c.dims, got)
		}
	}
}

func TestMisaligned(t *testing.T) {
	a := newOpArgs("[1000,4100],[4100,1000]", "c10::BFloat16|c10::BFloat16", "")
	if c, _ := modelOp("aten::mm", &a); !c.misaligned {
		t.Errorf("K = 4100 is not a multiple of 8: %+v", c)
	}
	a = newOpArgs("[1000,4100],[4100,1000]", "float|float", "")
	if c, _ := modelOp("aten::mm", &a); c.misaligned {
		t.Errorf("fp32 has no tensor-core multiple: %+v", c)
	}
}

// TestParseDims covers the compact Input Dims text.
func TestParseDims(t *testing.T) {
	got := parseDims("[8,16],[],?,[3]")
	if len(got) != 4 || len(got[0]) != 2 || got[0][1] != 16 || got[1] == nil || len(got[1]) != 0 || got[2] != nil || got[3][0] != 3 {
		t.Errorf("parseDims: %v", got)
	}
	if got := parseDims("[1,?]"); len(got) != 1 || got[0] != nil {
		t.Errorf("a size that is not a number: %v", got)
	}
}
