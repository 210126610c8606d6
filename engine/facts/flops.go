package facts

import (
	"strconv"
	"strings"
)

// Op kinds of the roofline model (RooflineKinds).
const (
	kindGEMM           = "gemm"            // mm, bmm, addmm, baddbmm, linear, matmul, _scaled_mm
	kindConvFwd        = "conv_fwd"        // convolution forward
	kindConvBwd        = "conv_bwd"        // convolution_backward (input and weight gradients)
	kindAttnFwd        = "attention_fwd"   // scaled-dot-product / flash / memory-efficient attention forward
	kindAttnBwd        = "attention_bwd"   // ... backward
	kindSoftmax        = "softmax"         // softmax, log_softmax and their backward
	kindNorm           = "norm"            // layer/RMS/group/batch norm and their backward
	kindElementwise    = "elementwise"     // aten pointwise ops and copy_
	kindFusedPointwise = "fused_pointwise" // Inductor triton_poi/red/per kernels (their args include the outputs)
)

// RooflineKinds lists the op kinds in report order.
var RooflineKinds = []string{kindGEMM, kindConvFwd, kindConvBwd, kindAttnFwd, kindAttnBwd, kindSoftmax, kindNorm, kindElementwise, kindFusedPointwise}

// tileSize is the output tile edge used to count workgroups: 128 x 128,
// a common tile of cuBLAS/hipBLASLt/CUTLASS GEMMs and of flash attention's
// query blocks.
const tileSize = 128

// opCost is the model of one op call: the floating-point operations and
// DRAM bytes it must at least do, the dtype class that sets its peak, the
// output tiles it gives the device (0 when not a tiled kernel) and whether
// a GEMM dimension is off the tensor-core multiple.
type opCost struct {
	kind       string
	flops      float64
	bytes      float64
	dtype      string // fp32, tf32, bf16, fp16, fp8, fp64, other
	tiles      int64
	misaligned bool
	causal     bool // attention with a causal mask (half the score matrix)
}

// opArgs is an op's record_shapes args, parsed.
type opArgs struct {
	dims     [][]int64 // per input; nil when not a flat list of sizes
	tensor   []bool    // the input has a tensor dtype
	types    []string
	concrete []string
}

// parseDims parses OpShapes.Dims text ("[8,16],[],?").
func parseDims(s string) [][]int64 {
	if s == "" {
		return nil
	}
	var out [][]int64
	for len(s) > 0 {
		if s[0] == ',' {
			s = s[1:]
			continue
		}
		if s[0] != '[' {
			out = append(out, nil)
			j := strings.IndexByte(s, ',')
			if j < 0 {
				break
			}
			s = s[j:]
			continue
		}
		j := strings.IndexByte(s, ']')
		if j < 0 {
			out = append(out, nil)
			break
		}
		body := s[1:j]
		shape := []int64{}
		ok := true
		if body != "" {
			for _, f := range strings.Split(body, ",") {
				v, err := strconv.ParseInt(f, 10, 64)
				if err != nil || v < 0 {
					ok = false
					break
				}
				shape = append(shape, v)
			}
		}
		if !ok {
			shape = nil
		}
		out = append(out, shape)
		s = s[j+1:]
	}
	return out
}

// newOpArgs parses the dims, types and concrete-input texts of one op.
func newOpArgs(dims, types, concrete string) opArgs {
	a := opArgs{dims: parseDims(dims)}
	if types != "" {
		a.types = strings.Split(types, "|")
	}
	if concrete != "" {
		a.concrete = strings.Split(concrete, "|")
	}
	a.tensor = make([]bool, len(a.dims))
	for i := range a.dims {
		a.tensor[i] = a.dims[i] != nil && i < len(a.types) && elemSize(a.types[i]) > 0
	}
	return a
}

// elemSize is the size in bytes of a record_shapes dtype, 0 for a
// non-tensor entry (Scalar, ScalarList, "").
func elemSize(t string) float64 {
	switch t {
	case "float", "float32", "int", "unsigned int", "c10::complex<c10::Half>":
		return 4
	case "double", "long int", "long", "int64", "c10::complex<float>":
		return 8
	case "c10::Half", "c10::BFloat16", "half", "bfloat16", "short", "unsigned short":
		return 2
	case "bool", "signed char", "unsigned char", "c10::Float8_e4m3fn", "c10::Float8_e5m2", "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz", "c10::quint8", "c10::qint8":
		return 1
	case "c10::complex<double>":
		return 16
	}
	return 0
}

// dtypeOf is the peak class of a record_shapes dtype.
func dtypeOf(t string) string {
	switch t {
	case "float", "float32":
		return "fp32"
	case "c10::BFloat16", "bfloat16":
		return "bf16"
	case "c10::Half", "half":
		return "fp16"
	case "double":
		return "fp64"
	}
	if strings.HasPrefix(t, "c10::Float8") {
		return "fp8"
	}
	return "other"
}

func (a *opArgs) shape(i int) []int64 {
	if i < len(a.dims) {
		return a.dims[i]
	}
	return nil
}

func (a *opArgs) typ(i int) string {
	if i < len(a.types) {
		return a.types[i]
	}
	return ""
}

func (a *opArgs) conc(i int) string {
	if i < len(a.concrete) {
		return a.concrete[i]
	}
	return ""
}

// bytesOf is the size in bytes of input i (0 when it is not a tensor).
func (a *opArgs) bytesOf(i int) float64 {
	if i >= len(a.dims) || !a.tensor[i] {
		return 0
	}
	return numel(a.dims[i]) * elemSize(a.types[i])
}

func numel(s []int64) float64 {
	n := 1.0
	for _, d := range s {
		n *= float64(d)
	}
	return n
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// gemmCost models C[batch, M, N] = A[batch, M, K] x B[batch, K, N]: 2
// batch M N K FLOPs; bytes read A and B, write C, plus extra (a bias).
func gemmCost(batch, m, n, k int64, elem float64, dt string, extra float64, batchB int64) opCost {
	b, mf, nf, kf := float64(batch), float64(m), float64(n), float64(k)
	c := opCost{kind: kindGEMM, dtype: dt}
	c.flops = 2 * b * mf * nf * kf
	c.bytes = elem*(b*mf*kf+float64(batchB)*kf*nf+b*mf*nf) + extra
	c.tiles = batch * ceilDiv(m, tileSize) * ceilDiv(n, tileSize)
	align := int64(8)
	if dt == "fp8" {
		align = 16
	}
	if dt == "bf16" || dt == "fp16" || dt == "fp8" {
		c.misaligned = m%align != 0 || n%align != 0 || k%align != 0
	}
	return c
}

// modelFor returns the cost model of op name, nil when it has none.
func modelFor(name string) func(*opArgs) (opCost, bool) {
	if f := opModels[name]; f != nil {
		return f
	}
	if strings.HasPrefix(name, "triton_poi_") || strings.HasPrefix(name, "triton_red_") || strings.HasPrefix(name, "triton_per_") {
		return func(a *opArgs) (opCost, bool) { return sumCost(a, kindFusedPointwise, false) }
	}
	if pointwiseOps[name] || name == "aten::copy_" {
		return pointwiseCost
	}
	return nil
}

// modelOp returns the cost of one call of op name with args a; false when
// the op is not modelled or its shapes do not fit the model.
func modelOp(name string, a *opArgs) (opCost, bool) {
	if f := modelFor(name); f != nil {
		return f(a)
	}
	return opCost{}, false
}

// opModels maps aten op names to their cost models.
var opModels = func() map[string]func(*opArgs) (opCost, bool) {
	m := map[string]func(*opArgs) (opCost, bool){}
	add := func(f func(*opArgs) (opCost, bool), names ...string) {
		for _, n := range names {
			m[n] = f
		}
	}
	add(func(a *opArgs) (opCost, bool) { return mmCost(a, 0, 1, -1) }, "aten::mm", "aten::_scaled_mm")
	add(func(a *opArgs) (opCost, bool) { return mmCost(a, 1, 2, 0) }, "aten::addmm", "aten::_addmm_activation")
	add(func(a *opArgs) (opCost, bool) { return bmmCost(a, 0, 1, -1) }, "aten::bmm")
	add(func(a *opArgs) (opCost, bool) { return bmmCost(a, 1, 2, 0) }, "aten::baddbmm")
	add(linearCost, "aten::linear")
	add(matmulCost, "aten::matmul")
	add(func(a *opArgs) (opCost, bool) { return convCost(a, 3, 4, 5, 6) }, "aten::convolution", "aten::_convolution")
	add(func(a *opArgs) (opCost, bool) { return convCost(a, 3, 4, 5, -1) }, "aten::conv1d", "aten::conv2d", "aten::conv3d")
	add(func(a *opArgs) (opCost, bool) { return convCost(a, -1, -1, -1, -1) }, "aten::cudnn_convolution", "aten::miopen_convolution")
	add(convBwdCost, "aten::convolution_backward")
	attn := func(bshd, bwd bool, causalAt, first int) func(*opArgs) (opCost, bool) {
		return func(a *opArgs) (opCost, bool) { return attnCost(a, bshd, bwd, causalAt, first) }
	}
	add(attn(false, false, 5, 0), "aten::scaled_dot_product_attention")
	add(attn(false, false, 4, 0), "aten::_scaled_dot_product_flash_attention")
	add(attn(false, false, 6, 0), "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention")
	add(attn(true, false, 8, 0), "aten::_flash_attention_forward")
	add(attn(true, false, -9, 0), "aten::_efficient_attention_forward")
	add(attn(false, true, 11, 1), "aten::_scaled_dot_product_flash_attention_backward", "aten::_scaled_dot_product_efficient_attention_backward")
	add(attn(false, true, 14, 1), "aten::_scaled_dot_product_cudnn_attention_backward")
	add(attn(true, true, 11, 1), "aten::_flash_attention_backward")
	add(attn(true, true, -14, 1), "aten::_efficient_attention_backward")
	add(func(a *opArgs) (opCost, bool) { return passCost(a, kindSoftmax, 1, 1) }, "aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax")
	add(func(a *opArgs) (opCost, bool) { return passCost(a, kindSoftmax, 2, 1) }, "aten::_softmax_backward_data", "aten::_log_softmax_backward_data")
	add(func(a *opArgs) (opCost, bool) { return sumCost(a, kindNorm, true) },
		"aten::layer_norm", "aten::native_layer_norm", "aten::rms_norm", "aten::_fused_rms_norm",
		"aten::group_norm", "aten::native_group_norm", "aten::batch_norm", "aten::native_batch_norm",
		"aten::cudnn_batch_norm", "aten::miopen_batch_norm", "aten::_batch_norm_impl_index",
		"aten::native_layer_norm_backward", "aten::_fused_rms_norm_backward", "aten::native_group_norm_backward",
		"aten::native_batch_norm_backward", "aten::cudnn_batch_norm_backward", "aten::miopen_batch_norm_backward")
	return m
}()

// mmCost: A = input ia [M, K], B = input ib [K, N], an optional bias
// input ic added to the output.
func mmCost(a *opArgs, ia, ib, ic int) (opCost, bool) {
	x, y := a.shape(ia), a.shape(ib)
	if len(x) != 2 || len(y) != 2 || !a.tensor[ia] || x[1] != y[0] {
		return opCost{}, false
	}
	var extra float64
	if ic >= 0 {
		extra = a.bytesOf(ic)
	}
	return gemmCost(1, x[0], y[1], x[1], elemSize(a.typ(ia)), dtypeOf(a.typ(ia)), extra, 1), true
}

func bmmCost(a *opArgs, ia, ib, ic int) (opCost, bool) {
	x, y := a.shape(ia), a.shape(ib)
	if len(x) != 3 || len(y) != 3 || !a.tensor[ia] || x[2] != y[1] || x[0] != y[0] {
		return opCost{}, false
	}
	var extra float64
	if ic >= 0 {
		extra = a.bytesOf(ic)
	}
	return gemmCost(x[0], x[1], y[2], x[2], elemSize(a.typ(ia)), dtypeOf(a.typ(ia)), extra, x[0]), true
}

// linearCost: input [..., K] x weight [N, K]^T (+ bias [N]).
func linearCost(a *opArgs) (opCost, bool) {
	x, w := a.shape(0), a.shape(1)
	if len(x) < 1 || len(w) != 2 || !a.tensor[0] || x[len(x)-1] != w[1] {
		return opCost{}, false
	}
	m := int64(1)
	for _, d := range x[:len(x)-1] {
		m *= d
	}
	return gemmCost(1, m, w[0], w[1], elemSize(a.typ(0)), dtypeOf(a.typ(0)), a.bytesOf(2), 1), true
}

// matmulCost follows torch.matmul's broadcasting: 1-D operands gain a unit
// row or column, leading dimensions broadcast into the batch.
func matmulCost(a *opArgs) (opCost, bool) {
	x, y := a.shape(0), a.shape(1)
	if len(x) == 0 || len(y) == 0 || !a.tensor[0] {
		return opCost{}, false
	}
	if len(x) == 1 {
		x = []int64{1, x[0]}
	}
	if len(y) == 1 {
		y = []int64{y[0], 1}
	}
	m, k := x[len(x)-2], x[len(x)-1]
	k2, n := y[len(y)-2], y[len(y)-1]
	if k != k2 {
		return opCost{}, false
	}
	bx, by := x[:len(x)-2], y[:len(y)-2]
	if len(by) == 0 {
		// [..., M, K] x [K, N]: one GEMM over the flattened rows.
		for _, d := range bx {
			m *= d
		}
		return gemmCost(1, m, n, k, elemSize(a.typ(0)), dtypeOf(a.typ(0)), 0, 1), true
	}
	batch, batchB := int64(1), int64(1)
	for i := 1; i <= max(len(bx), len(by)); i++ {
		dx, dy := int64(1), int64(1)
		if i <= len(bx) {
			dx = bx[len(bx)-i]
		}
		if i <= len(by) {
			dy = by[len(by)-i]
		}
		if dx != dy && dx != 1 && dy != 1 {
			return opCost{}, false
		}
		batch *= max(dx, dy)
		batchB *= dy
	}
	return gemmCost(batch, m, n, k, elemSize(a.typ(0)), dtypeOf(a.typ(0)), 0, batchB), true
}

// intList parses a Concrete Inputs list such as "[2, 2]" (nil when it is
// not one).
func intList(s string) []int64 {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil
	}
	var out []int64
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// convOut returns the output spatial sizes of a convolution of input
// spatial sizes in, kernel k, with stride, padding and dilation lists from
// Concrete Inputs (one value broadcasts; absent: stride 1, "same"
// padding, dilation 1, so the output is as large as the input, which
// overstates the work of a strided conv and so errs towards quiet).
func convOut(in, k, stride, pad, dil []int64) []int64 {
	at := func(l []int64, i int, def int64) int64 {
		switch {
		case len(l) == 1:
			return l[0]
		case i < len(l):
			return l[i]
		}
		return def
	}
	out := make([]int64, len(in))
	for i := range in {
		if stride == nil && pad == nil {
			out[i] = in[i]
			continue
		}
		s, p, d := at(stride, i, 1), at(pad, i, (k[i]-1)/2), at(dil, i, 1)
		if s <= 0 {
			s = 1
		}
		o := (in[i]+2*p-d*(k[i]-1)-1)/s + 1
		out[i] = max(o, 1)
	}
	return out
}

// convCost models a forward convolution: input [N, C, *in], weight [Cout,
// C/groups, *k]; 2 N Cout prod(out) (C/groups) prod(k) FLOPs. is, ip, id,
// it are the Concrete Inputs positions of stride, padding, dilation and
// transposed (-1: not recorded for this op); groups need no position, as
// the weight's second dimension already is C/groups.
func convCost(a *opArgs, is, ip, id, it int) (opCost, bool) {
	x, w := a.shape(0), a.shape(1)
	if len(x) < 3 || len(w) != len(x) || !a.tensor[0] || (it >= 0 && strings.EqualFold(a.conc(it), "true")) {
		return opCost{}, false
	}
	var stride, pad, dil []int64
	if is >= 0 {
		stride, pad, dil = intList(a.conc(is)), intList(a.conc(ip)), intList(a.conc(id))
		if p := a.conc(ip); p == "valid" {
			pad = []int64{0}
		}
	}
	out := convOut(x[2:], w[2:], stride, pad, dil)
	elem, dt := elemSize(a.typ(0)), dtypeOf(a.typ(0))
	n, cout := x[0], w[0]
	outN := float64(n) * float64(cout) * numel(out)
	c := opCost{kind: kindConvFwd, dtype: dt}
	c.flops = 2 * outN * float64(w[1]) * numel(w[2:])
	c.bytes = a.bytesOf(0) + a.bytesOf(1) + a.bytesOf(2) + outN*elem
	rows := n * int64(numel(out))
	c.tiles = ceilDiv(rows, tileSize) * ceilDiv(cout, tileSize)
	return c, true
}

// convBwdCost models aten::convolution_backward(grad_output [N, Cout,
// *out], input [N, C, *in], weight, ..., output_mask): each of the input
// and weight gradients costs the forward's FLOPs; output_mask (Concrete
// Inputs position 10) says which are computed, both when not recorded.
func convBwdCost(a *opArgs) (opCost, bool) {
	g, x, w := a.shape(0), a.shape(1), a.shape(2)
	if len(g) < 3 || len(x) != len(g) || len(w) != len(g) || !a.tensor[0] {
		return opCost{}, false
	}
	grads := 2.0
	if m := a.conc(10); m != "" {
		// output_mask is [input, weight, bias]; count the first two.
		parts := strings.Split(strings.Trim(m, "[] "), ",")
		grads = 0
		for i, p := range parts {
			if i < 2 && strings.TrimSpace(p) == "True" {
				grads++
			}
		}
	}
	fwd := 2 * numel(g) * float64(w[1]) * numel(w[2:])
	c := opCost{kind: kindConvBwd, dtype: dtypeOf(a.typ(0))}
	c.flops = grads * fwd
	c.bytes = a.bytesOf(0) + 2*a.bytesOf(1) + 2*a.bytesOf(2)
	rows := g[0] * int64(numel(g[2:]))
	c.tiles = ceilDiv(rows, tileSize) * ceilDiv(g[1], tileSize)
	return c, grads > 0
}

// attnCost models attention over q [B, H, Sq, D] (bshd: [B, Sq, H, D]),
// k [.., Sk, ..], v: forward 4 B H Sq Sk D FLOPs (QK^T and PV; 2 B H Sq Sk
// (D + Dv)), backward 2.5 times that (the five GEMMs of the FlashAttention
// backward), halved under a causal mask. causalAt is the Concrete Inputs
// position of is_causal (negative: of custom_mask_type, causal when not
// 0); first is the position of q (the backward's first input is grad_out).
func attnCost(a *opArgs, bshd, bwd bool, causalAt, first int) (opCost, bool) {
	q, k, v := a.shape(first), a.shape(first+1), a.shape(first+2)
	if len(q) != 4 || len(k) != 4 || len(v) != 4 || !a.tensor[first] {
		return opCost{}, false
	}
	b, h, sq, d := q[0], q[1], q[2], q[3]
	sk, dv := k[2], v[3]
	if bshd {
		h, sq, sk = q[2], q[1], k[1]
	}
	c := opCost{kind: kindAttnFwd, dtype: dtypeOf(a.typ(first))}
	c.flops = 2 * float64(b) * float64(h) * float64(sq) * float64(sk) * float64(d+dv)
	if causalAt >= 0 {
		c.causal = strings.EqualFold(a.conc(causalAt), "true")
	} else if m := a.conc(-causalAt); m != "" && m != "0" {
		c.causal = true
	}
	if c.causal {
		c.flops /= 2
	}
	out := float64(b) * float64(h) * float64(sq) * float64(dv) * elemSize(a.typ(first))
	c.bytes = a.bytesOf(first) + a.bytesOf(first+1) + a.bytesOf(first+2) + out
	if bwd {
		c.kind = kindAttnBwd
		c.flops *= 2.5
		// read grad_out, q, k, v, out; write dq, dk, dv
		c.bytes *= 2
	}
	c.tiles = b * h * ceilDiv(sq, tileSize)
	return c, true
}

// passCost models a memory-bound op over its first input: reads reads
// tensors and writes writes of that size.
func passCost(a *opArgs, kind string, reads, writes float64) (opCost, bool) {
	if len(a.dims) == 0 || !a.tensor[0] {
		return opCost{}, false
	}
	return opCost{kind: kind, dtype: dtypeOf(a.typ(0)), bytes: (reads + writes) * a.bytesOf(0)}, true
}

// sumCost models a memory-bound op that reads every tensor input once and,
// with output, writes one tensor the size of the first input (fused
// Inductor kernels list their outputs among the args, so output is false).
func sumCost(a *opArgs, kind string, output bool) (opCost, bool) {
	if len(a.dims) == 0 || !a.tensor[0] {
		return opCost{}, false
	}
	c := opCost{kind: kind, dtype: dtypeOf(a.typ(0))}
	for i := range a.dims {
		c.bytes += a.bytesOf(i)
	}
	if output {
		c.bytes += a.bytesOf(0)
	}
	return c, c.bytes > 0
}

// pointwiseCost models an elementwise op: reads every tensor input, writes
// the broadcast output (the largest input).
func pointwiseCost(a *opArgs) (opCost, bool) {
	c := opCost{kind: kindElementwise}
	var big float64
	for i := range a.dims {
		b := a.bytesOf(i)
		c.bytes += b
		if b > big {
			big, c.dtype = b, dtypeOf(a.typ(i))
		}
	}
	c.bytes += big
	return c, big > 0
}
