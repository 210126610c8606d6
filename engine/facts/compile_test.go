package facts_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// TestCompiledFacts: in a 10 ms step, frame 0 runs compiled (region
// 0/0 over [1000, 3000) and its recompilation 0/1 over [5000, 6000)),
// frame 1 once (a graph break's resume function, [3000, 4000)); a
// triton_ kernel of 400 us, a GEMM of 600 us launched inside a region
// and an eager kernel of 1000 us launched outside: compiled kernel time
// 1000 of 2000 us, Triton 400 of 2000; compiled regions 4 ms of 10;
// a 500 us dynamo_timed compile span; one cudaGraphLaunch.
func TestCompiledFacts(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 10000)
	b.X("cpu_op", "Torch-Compiled Region: 0/0", 1000, 2000)
	b.X("cpu_op", "Torch-Compiled Region: 1/0", 3000, 1000)
	b.X("cpu_op", "Torch-Compiled Region: 0/1", 5000, 1000)
	b.X("cpu_op", "_compile.compile_inner (dynamo_timed)", 4000, 500)
	b.Launch(1100, 5, "triton_poi_fused_add_mul_0", 1200, 400)
	b.Launch(3100, 5, "sm90_xmma_gemm_bf16bf16_bf16f32", 3200, 600)
	b.Launch(7000, 5, "void at::native::vectorized_elementwise_kernel<4>", 7100, 1000)
	c := b.Runtime("cudaGraphLaunch", 8500, 10)
	b.GPU("kernel", "graph_kernel", 9900, 1, c, nil)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	near := func(name string, p *float64, want float64) {
		t.Helper()
		if p == nil || math.Abs(*p-want) > 1e-3 {
			t.Errorf("%s = %v, want %v", name, fmtp(p), want)
		}
	}
	near("compiled_region_ratio", f.CompiledRegionRatio, 0.4)
	near("compiled_kernel_ratio", f.CompiledKernelRatio, 1000.0/2001)
	near("triton_kernel_ratio", f.TritonKernelRatio, 400.0/2001)
	near("compile_time_ratio", f.CompileTimeRatio, 0.05)
	if f.CompiledFrameCount == nil || *f.CompiledFrameCount != 2 || f.RecompileCount == nil || *f.RecompileCount != 1 {
		t.Errorf("compiled_frame_count %v, recompile_count %v, want 2 and 1", f.CompiledFrameCount, f.RecompileCount)
	}
	if f.GraphLaunchCount == nil || *f.GraphLaunchCount != 1 {
		t.Errorf("graph_launch_count = %v, want 1", f.GraphLaunchCount)
	}
}

// TestCompiledFactsEager: an eager trace has measured zeros for the
// shares and no frame counts (nothing shows a compiled frame).
func TestCompiledFactsEager(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Op("aten::add", 100, 50)
	b.Launch(110, 5, "void at::native::vectorized_elementwise_kernel<4>", 200, 100)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	if f.CompiledKernelRatio == nil || *f.CompiledKernelRatio != 0 || f.CompiledRegionRatio == nil || *f.CompiledRegionRatio != 0 || f.CompiledFrameCount != nil || f.RecompileCount != nil {
		t.Errorf("eager: compiled_kernel_ratio %v, compiled_region_ratio %v, frames %v, recompiles %v", fmtp(f.CompiledKernelRatio), fmtp(f.CompiledRegionRatio), f.CompiledFrameCount, f.RecompileCount)
	}
}

// TestCompiledFactsShared: the shared traces that use torch.compile or
// CUDA/HIP Graphs. The TraceLens torch.compile sample launches all its
// kernels from a compiled region; the vLLM decode replays 99% of its
// kernels from one hipGraphLaunch; the B200 vLLM trace runs eagerly
// beside one recompiled frame (Torch-Compiled Region: 0/1) whose kernels
// are a negligible share; SGLang's decode replays one HIP graph.
func TestCompiledFactsShared(t *testing.T) {
	dir := factstest.SharedTraces(t)
	cases := []struct {
		path               string
		compiledAtLeast    float64
		compiledBelow      float64
		graphs             int64
		graphRatioAtLeast  float64
		frames, recompiles int64 // -1: null
		tritonShareAtLeast float64
	}{
		{"tracelens/tests/traces/torch_compile_triton/trace.json.gz", 0.99, 1.01, 0, 0, 1, 0, 0.05},
		{"tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", 0, 0.5, 1, 0.99, -1, -1, 0.01},
		{"tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", 0, 0.01, 1, 0.95, -1, -1, 0},
		{"tracelens/tests/traces/b200/eager_trace.json.gz", 0, 0.05, 0, 0, 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(filepath.Base(filepath.Dir(c.path)), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.path))
			if err != nil {
				t.Skipf("skipping: %v", err)
			}
			tr, err := trace.Parse(bytes.NewReader(raw), c.path)
			if err != nil {
				t.Fatal(err)
			}
			f := facts.Derive(tr, facts.DefaultConfig())
			if f.CompiledKernelRatio == nil || *f.CompiledKernelRatio < c.compiledAtLeast || *f.CompiledKernelRatio >= c.compiledBelow {
				t.Errorf("compiled_kernel_ratio = %v, want in [%v, %v)", fmtp(f.CompiledKernelRatio), c.compiledAtLeast, c.compiledBelow)
			}
			if f.TritonKernelRatio == nil || *f.TritonKernelRatio < c.tritonShareAtLeast {
				t.Errorf("triton_kernel_ratio = %v, want at least %v", fmtp(f.TritonKernelRatio), c.tritonShareAtLeast)
			}
			if f.GraphLaunchCount == nil || *f.GraphLaunchCount != c.graphs {
				t.Errorf("graph_launch_count = %v, want %d", f.GraphLaunchCount, c.graphs)
			}
			if c.graphs > 0 && (f.GraphLaunchedKernelRatio == nil || *f.GraphLaunchedKernelRatio < c.graphRatioAtLeast) {
				t.Errorf("graph_launched_kernel_ratio = %v, want at least %v", fmtp(f.GraphLaunchedKernelRatio), c.graphRatioAtLeast)
			}
			count := func(p *int64) int64 {
				if p == nil {
					return -1
				}
				return *p
			}
			if count(f.CompiledFrameCount) != c.frames || count(f.RecompileCount) != c.recompiles {
				t.Errorf("compiled_frame_count %d, recompile_count %d, want %d and %d", count(f.CompiledFrameCount), count(f.RecompileCount), c.frames, c.recompiles)
			}
		})
	}
}
