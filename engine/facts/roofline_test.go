package facts_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

func i64(v int64) *int64 { return &v }

// TestLookupDevice matches the device names real traces carry (and their
// SM/CU counts) to the peak table, and refuses what it does not know.
func TestLookupDevice(t *testing.T) {
	for _, c := range []struct {
		name         string
		units, major int64
		want         string
		bf16         float64
	}{
		{"AMD Instinct MI300X", 304, 9, "AMD Instinct MI300X", 1307.4e12},
		{"AMD Instinct MI300X VF", 304, 9, "AMD Instinct MI300X", 1307.4e12},
		{"AMD Instinct MI300X", 38, 9, "", 0}, // a CPX partition: an eighth of the peak
		{"NVIDIA H100 80GB HBM3", 132, 9, "NVIDIA H100 SXM", 989.5e12},
		{"NVIDIA H100 PCIe", 114, 9, "NVIDIA H100 PCIe", 756.5e12},
		{"NVIDIA H200", 132, 9, "NVIDIA H200 SXM", 989.5e12},
		{"NVIDIA B200", 148, 10, "NVIDIA B200", 2250e12},
		{"NVIDIA A100-SXM4-80GB", 108, 8, "NVIDIA A100 80GB SXM", 312e12},
		{"NVIDIA A100-PG509-200", 108, 8, "NVIDIA A100 40GB SXM", 312e12},
		{"NVIDIA A100 80GB PCIe", 108, 8, "NVIDIA A100 80GB PCIe", 312e12},
		{"NVIDIA A100-SXM4-80GB", 14, 8, "", 0}, // a MIG slice
		{"Tesla V100-SXM2-32GB", 80, 7, "NVIDIA V100 SXM2", 0},
		{"NVIDIA GeForce RTX 4090", 128, 8, "NVIDIA GeForce RTX 4090", 165.2e12},
		{"NVIDIA GeForce RTX 3090", 82, 8, "NVIDIA GeForce RTX 3090", 71e12},
		{"NVIDIA GeForce RTX 2080 Ti", 68, 7, "NVIDIA GeForce RTX 2080 Ti", 0},
		{"NVIDIA L4", 58, 8, "NVIDIA L4", 121e12},
		{"NVIDIA L40S", 142, 8, "", 0},
		{"AMD Instinct MI250X/MI250", 110, 9, "AMD Instinct MI250X (one GCD)", 191.5e12},
		{"AMD Instinct MI250X/MI250", 104, 9, "AMD Instinct MI250 (one GCD)", 181.05e12},
		{"AMD Instinct MI210", 104, 9, "AMD Instinct MI210", 181e12},
		{"AMD Radeon Graphics", 104, 9, "AMD Instinct MI210 / MI250 GCD (gfx90a, 104 CUs)", 181e12},
		{"AMD Radeon Graphics", 96, 11, "", 0},
		{"Quadro GP100", 56, 6, "", 0},
		{"", 304, 9, "", 0},
	} {
		p := facts.LookupDevice(c.name, i64(c.units), i64(c.major))
		switch {
		case c.want == "" && p != nil:
			t.Errorf("%q (%d units): matched %s, want none", c.name, c.units, p.Name)
		case c.want != "" && (p == nil || p.Name != c.want || p.BF16FLOPS != c.bf16):
			t.Errorf("%q (%d units): got %+v, want %s with bf16 %g", c.name, c.units, p, c.want, c.bf16)
		}
	}
	// Without an SM count the name decides.
	if p := facts.LookupDevice("NVIDIA H100 80GB HBM3", nil, nil); p == nil || p.Name != "NVIDIA H100 SXM" {
		t.Errorf("H100 without numSms: %+v", p)
	}
}

// mmTrace is one step of an A100 (the builder's device) with one aten::mm
// of 4096^3 in bf16 that launches two kernels of 1000 and 500 us, and an
// unmodelled kernel of 500 us.
func mmTrace() *tracetest.Builder {
	b := tracetest.New()
	b.Step(1, 0, 5000)
	b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": b.Pid, "tid": b.Tid, "ts": 100, "dur": 50,
		"args": map[string]any{"External id": 7, "Input Dims": []any{[]any{4096, 4096}, []any{4096, 4096}}, "Input type": []any{"c10::BFloat16", "c10::BFloat16"}}})
	for _, k := range []struct{ ts, dur float64 }{{200, 1000}, {1200, 500}} {
		c := b.Runtime("cudaLaunchKernel", 110+k.ts/100, 5)
		b.GPU("kernel", "Cijk_gemm_bf16", k.ts, k.dur, c, map[string]any{"External id": 7})
	}
	b.Op("aten::relu", 300, 20)
	c := b.Runtime("cudaLaunchKernel", 305, 5)
	b.GPU("kernel", "relu_kernel", 2000, 500, c, nil)
	return b
}

// TestRooflineFacts checks the achieved throughput against a hand
// computation: 2 x 4096^3 FLOPs in the 1500 us of the op's two kernels is
// 91.6 TFLOP/s, 29.4% of the A100's 312 TFLOP/s bf16 peak; the op's
// kernels are 1500 of the 2000 us of kernel time.
func TestRooflineFacts(t *testing.T) {
	f := derive(t, mmTrace())
	if f.DevicePeak == nil || f.DevicePeak.Name != "NVIDIA A100 80GB SXM" {
		t.Fatalf("device_peak: %+v", f.DevicePeak)
	}
	flops := 2.0 * 4096 * 4096 * 4096
	wantF(t, "modelled_kernel_time_ratio", f.ModelledKernelTimeRatio, 0.75)
	wantF(t, "modelled_flops_per_s", f.ModelledFLOPSPerS, flops/1500e-6)
	wantF(t, "kernel_peak_flops_ratio", f.KernelPeakFLOPSRatio, flops/1500e-6/312e12)
	// Intensity 2 x 4096^3 / (3 x 2 x 4096^2) = 1365 FLOP/byte, past the
	// ridge (312e12 / 2039e9 = 153): compute-bound, roofline = peak.
	wantF(t, "kernel_roofline_ratio", f.KernelRooflineRatio, flops/1500e-6/312e12)
	if len(f.RooflineOps) != 1 {
		t.Fatalf("roofline_ops: %+v", f.RooflineOps)
	}
	op := f.RooflineOps[0]
	if op.Name != "aten::mm" || op.Kind != "gemm" || op.Calls != 1 || !near(op.KernelUS, 1500) || op.Bound != "compute" || op.DType != "bf16" ||
		op.PeakDType != "bf16" || op.Tiles != 32*32 || op.ComputeUnits != 108 || !near(op.KernelShare, 0.75) || op.Shapes != "[4096,4096],[4096,4096]" {
		t.Errorf("roofline op: %+v", op)
	}
	if !near(op.Intensity, flops/(3*2*4096*4096)) || !near(op.FLOPSPerS, flops/1500e-6) {
		t.Errorf("intensity %v, flops_per_s %v", op.Intensity, op.FLOPSPerS)
	}
	if len(f.RooflineKinds) != 1 || f.RooflineKinds[0].Kind != "gemm" || f.RooflineKinds[0].Bound != "compute" {
		t.Errorf("roofline_kinds: %+v", f.RooflineKinds)
	}
}

// TestRooflineOuterOpTextTooLong: an enclosing modelled op whose
// record_shapes text is over the cap (only its lead dim or dtype is kept)
// is not taken for the op the roofline models, so the aten::mm under it
// still is.
func TestRooflineOuterOpTextTooLong(t *testing.T) {
	dims := []any{[]any{4096, 4096}}
	types := []any{}
	for range 1500 {
		dims = append(dims, []any{1})
		types = append(types, "c10::BFloat16")
	}
	for _, args := range []map[string]any{{"Input Dims": dims}, {"Input type": types}} {
		b := mmTrace()
		b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": b.Pid, "tid": b.Tid, "ts": 90, "dur": 100, "args": args})
		f := derive(t, b)
		wantF(t, "modelled_kernel_time_ratio", f.ModelledKernelTimeRatio, 0.75)
		if len(f.RooflineOps) != 1 || f.RooflineOps[0].Name != "aten::mm" {
			t.Errorf("roofline_ops under an outer op with %v: %+v", slices.Collect(maps.Keys(args)), f.RooflineOps)
		}
	}
}

// TestRooflineUnknownDevice: an unknown device keeps the achieved rates
// but no share of peak.
func TestRooflineUnknownDevice(t *testing.T) {
	b := mmTrace().Top("deviceProperties", []any{map[string]any{"id": 0, "name": "Quadro GP100", "numSms": 56, "computeMajor": 6}})
	f := derive(t, b)
	if f.DevicePeak != nil || f.KernelPeakFLOPSRatio != nil || f.KernelRooflineRatio != nil {
		t.Errorf("unknown device: peak %+v, ratios %v %v", f.DevicePeak, fmtp(f.KernelPeakFLOPSRatio), fmtp(f.KernelRooflineRatio))
	}
	if f.ModelledFLOPSPerS == nil || len(f.RooflineOps) != 1 || f.RooflineOps[0].PeakRatio != nil {
		t.Errorf("achieved rates should stay: %v %+v", fmtp(f.ModelledFLOPSPerS), f.RooflineOps)
	}
}

// TestRooflineNoShapes: without record_shapes the facts are null.
func TestRooflineNoShapes(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 2000)
	b.Op("aten::mm", 100, 50)
	c := b.Runtime("cudaLaunchKernel", 110, 5)
	b.GPU("kernel", "gemm", 200, 1000, c, nil)
	f := derive(t, b)
	if f.DevicePeak == nil || f.ModelledKernelTimeRatio != nil || f.KernelPeakFLOPSRatio != nil || f.RooflineOps != nil {
		t.Errorf("no shapes: %+v %v %v %+v", f.DevicePeak, fmtp(f.ModelledKernelTimeRatio), fmtp(f.KernelPeakFLOPSRatio), f.RooflineOps)
	}
}

// TestRooflineRealMI300X checks the shared MI300X trace with a flash
// attention (B=8, H=16, S=4096, D=128, bf16) that keeps the GPU busy: it
// runs at about 23% of the bf16 peak, its GEMMs at 37-45%.
func TestRooflineRealMI300X(t *testing.T) {
	path := filepath.Join(factstest.SharedTraces(t), "tracelens/tests/traces/torch_compile_triton/trace.json.gz")
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("skipping: %s not found", path)
	}
	defer fh.Close()
	tr, err := trace.Parse(fh, path)
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	if f.DevicePeak == nil || f.DevicePeak.Name != "AMD Instinct MI300X" {
		t.Fatalf("device_peak: %+v", f.DevicePeak)
	}
	var attn, gemm bool
	for _, op := range f.RooflineOps {
		switch {
		case op.Kind == "attention_fwd":
			attn = true
			if op.PeakRatio == nil || *op.PeakRatio < 0.2 || *op.PeakRatio > 0.25 || op.Fused == nil || !*op.Fused {
				t.Errorf("attention: %+v peak %v", op, fmtp(op.PeakRatio))
			}
		case op.Kind == "gemm" && strings.HasPrefix(op.Shapes, "[32768,2048],[2048,8192]"):
			gemm = true
			if op.PeakRatio == nil || *op.PeakRatio < 0.4 || *op.PeakRatio > 0.5 {
				t.Errorf("gemm: %+v peak %v", op, fmtp(op.PeakRatio))
			}
		}
	}
	if !attn || !gemm {
		t.Errorf("roofline_ops lack the attention or the GEMM: %+v", f.RooflineOps)
	}
	wantF(t, "modelled_kernel_time_ratio", f.ModelledKernelTimeRatio, 1)
}

// TestFLOPSUnit: the per-second unit of FLOP/s facts, by name and for the
// fields of device_peak.
func TestFLOPSUnit(t *testing.T) {
	for _, n := range []string{"modelled_flops_per_s", "device_peak.bf16_flops_per_s"} {
		if u := facts.UnitOf(n); u != facts.UnitFLOPS {
			t.Errorf("UnitOf(%s) = %q, want %q", n, u, facts.UnitFLOPS)
		}
	}
}
