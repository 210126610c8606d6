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

func deriveWith(t *testing.T, b *tracetest.Builder, marker string) *facts.Facts {
	t.Helper()
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := facts.DefaultConfig()
	cfg.StepMarker = marker
	return facts.Derive(tr, cfg)
}

// servingTrace is three vLLM decode iterations without ProfilerStep: each
// execute annotation (with the model runner's frame nested in it) launches
// one kernel. The first kernel ends after its annotation (a GPU tail of
// 50 us), the second runs into the third iteration (clipped at its start,
// a tail of 100 us), the last drains 200 us past its annotation. An
// unrelated operator at 900 us widens the whole-trace window.
func servingTrace() *tracetest.Builder {
	b := tracetest.New()
	name := "execute_context_0(0)_generation_8(8)"
	for k, s := range []float64{0, 200, 400} {
		b.X("user_annotation", name, s, 100)
		b.X("python_function", "vllm/v1/worker/gpu_model_runner.py(3380): execute_model", s+1, 98)
		kdur := []float64{140, 240, 290}[k]
		b.Launch(s+10, 5, "decode_kernel", s+10, kdur)
	}
	b.Op("aten::empty", 900, 100)
	return b
}

// TestStepMarkerAuto: --step-marker auto turns the engine's iteration
// spans into steps under DESIGN's step rules: each step extends to the end
// of the GPU work launched inside it, never past the next marker, and the
// last step's drain is capped at the largest tail of the others.
func TestStepMarkerAuto(t *testing.T) {
	f := deriveWith(t, servingTrace(), facts.StepMarkerAuto)
	if !f.HasSteps || f.StepsCount != 3 {
		t.Fatalf("has_steps %v, steps_count %d, want 3 steps", f.HasSteps, f.StepsCount)
	}
	m := f.StepMarker
	if m == nil || m.Source != "auto" || m.Engine != "vllm" || m.Steps != 3 || m.DecodeSteps != 3 || m.PrefillSteps != 0 {
		t.Fatalf("step_marker = %+v", m)
	}
	if f.StepMarkerFound != nil {
		t.Errorf("step_marker_found = %+v, want null when the marker is used", f.StepMarkerFound)
	}
	// Steps [0,150) [200,400) [400,700): W = 650 us.
	if f.WindowUS != 650 {
		t.Errorf("window_us = %v, want 650", f.WindowUS)
	}
	got := f.StepDurationsUS()
	want := []float64{150, 200, 200} // the last: 300 with a 200 us tail, capped at 100
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("step durations = %v, want %v", got, want)
	}
	wantF(t, "last_step_drain_us", f.LastStepDrainUS, 100)
	for _, s := range f.Steps {
		if s.Phase != "decode" || s.Name != "execute_context_0(0)_generation_8(8)" {
			t.Errorf("step %q phase %q, want the execute annotation, decode", s.Name, s.Phase)
		}
	}
	wantF(t, "kernels_per_step", f.KernelsPerStep, 1)
}

// TestStepMarkerRegex: a regular expression names the iteration span; the
// nested model-runner frame it also matches belongs to that iteration.
func TestStepMarkerRegex(t *testing.T) {
	f := deriveWith(t, servingTrace(), `execute`)
	if f.StepsCount != 3 || f.StepMarker == nil || f.StepMarker.Source != "regex" || f.StepMarker.Pattern != "execute" {
		t.Fatalf("steps_count %d, step_marker %+v", f.StepsCount, f.StepMarker)
	}
	if f.WindowUS != 650 {
		t.Errorf("window_us = %v, want 650", f.WindowUS)
	}
	f = deriveWith(t, servingTrace(), `^no such span$`)
	if f.HasSteps || f.StepMarker != nil {
		t.Errorf("an unmatched marker made steps: %+v", f.StepMarker)
	}
	if len(f.Diagnostics) == 0 || f.Diagnostics[0].Reason != "step_marker_unmatched" {
		t.Errorf("diagnostics = %+v, want step_marker_unmatched", f.Diagnostics)
	}
	if f.StepMarkerFound == nil || f.StepMarkerFound.Engine != "vllm" {
		t.Errorf("step_marker_found = %+v, want the vLLM annotation", f.StepMarkerFound)
	}
	if err := facts.CheckStepMarker("step[("); err == nil {
		t.Error("CheckStepMarker accepted an invalid expression")
	}
	for _, ok := range []string{"", "auto", `^forward$`} {
		if err := facts.CheckStepMarker(ok); err != nil {
			t.Errorf("CheckStepMarker(%q) = %v", ok, err)
		}
	}
}

// TestStepMarkerDefault: without --step-marker the core facts stay as
// DESIGN defines them for a trace without steps (W is the whole trace),
// the automatic marker is only reported, and the role breakdown covers W.
func TestStepMarkerDefault(t *testing.T) {
	f := deriveWith(t, servingTrace(), "")
	if f.HasSteps || f.StepsCount != 0 || f.StepMarker != nil || f.StepTimeUS != nil {
		t.Fatalf("default made steps: %d, %+v", f.StepsCount, f.StepMarker)
	}
	if f.WindowUS != 1000 {
		t.Errorf("window_us = %v, want 1000 (first start to last end)", f.WindowUS)
	}
	if m := f.StepMarkerFound; m == nil || m.Engine != "vllm" || m.Steps != 3 {
		t.Errorf("step_marker_found = %+v", m)
	}
	// Kernels cover [10,150) [210,450) [410,700): 140+240+250 = 630 of 1000.
	wantF(t, "step_kernel_ratio", f.StepKernelRatio, 0.63)
	sum := 0.0
	for _, p := range []*float64{f.StepKernelRatio, f.StepMemcpyRatio, f.StepMemsetRatio, f.StepCommunicationRatio,
		f.StepRuntimeRatio, f.StepDataloaderRatio, f.StepCPUOpRatio, f.StepOtherRatio} {
		if p == nil {
			t.Fatal("a step_*_ratio is null without steps")
		}
		sum += *p
	}
	if !near(sum, 1) {
		t.Errorf("whole-window roles sum to %v, want 1", sum)
	}
	if len(f.Steps) != 0 {
		t.Errorf("steps table has %d rows without steps", len(f.Steps))
	}
}

// TestStepMarkerProfilerStepWins: ProfilerStep#N marks the steps even when
// a marker is given, and step_marker says so.
func TestStepMarkerProfilerStepWins(t *testing.T) {
	b := servingTrace().Step(1, 0, 300)
	f := deriveWith(t, b, facts.StepMarkerAuto)
	if f.StepsCount != 1 || f.StepMarker == nil || f.StepMarker.Source != "profiler_step" {
		t.Fatalf("steps %d, step_marker %+v", f.StepsCount, f.StepMarker)
	}
}

// TestStepMarkerSGLangPhases: SGLang's step[...] spans say prefill or decode.
func TestStepMarkerSGLangPhases(t *testing.T) {
	b := tracetest.New()
	b.X("user_annotation", "step[PREFILL bs=4]", 0, 100)
	b.X("user_annotation", "step[DECODE bs=32]", 200, 100)
	b.X("user_annotation", "step[DECODE bs=32]", 400, 100)
	b.Launch(10, 5, "k", 20, 50)
	f := deriveWith(t, b, facts.StepMarkerAuto)
	m := f.StepMarker
	if m == nil || m.Engine != "sglang" || m.Steps != 3 || m.PrefillSteps != 1 || m.DecodeSteps != 2 {
		t.Fatalf("step_marker = %+v", m)
	}
	if f.Steps[0].Phase != "prefill" || f.Steps[2].Phase != "decode" {
		t.Errorf("phases %q %q", f.Steps[0].Phase, f.Steps[2].Phase)
	}
}

// TestStepMarkerSharedTraces: on the shared serving traces the automatic
// marker is found by default (the core facts unchanged, REFERENCE.json
// holds them) and gives one step per engine iteration with --step-marker auto.
func TestStepMarkerSharedTraces(t *testing.T) {
	dir := factstest.SharedTraces(t)
	cases := []struct {
		path, engine, phase string
	}{
		{"tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", "vllm", "decode"},
		{"tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", "sglang", "decode"},
		{"tracelens/tests/traces/b200/eager_trace.json.gz", "vllm", "prefill"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.path))
			if err != nil {
				t.Skipf("skipping: %v", err)
			}
			tr, err := trace.Parse(bytes.NewReader(raw), c.path)
			if err != nil {
				t.Fatal(err)
			}
			def := facts.Derive(tr, facts.DefaultConfig())
			if def.HasSteps || def.StepMarkerFound == nil || def.StepMarkerFound.Engine != c.engine {
				t.Fatalf("default: has_steps %v, step_marker_found %+v", def.HasSteps, def.StepMarkerFound)
			}
			if def.StepKernelRatio == nil {
				t.Error("default: no whole-window breakdown")
			}
			cfg := facts.DefaultConfig()
			cfg.StepMarker = facts.StepMarkerAuto
			f := facts.Derive(tr, cfg)
			if f.StepsCount != 1 || f.StepMarker == nil || f.StepMarker.Engine != c.engine || f.Steps[0].Phase != c.phase {
				t.Fatalf("auto: steps %d, step_marker %+v", f.StepsCount, f.StepMarker)
			}
			if f.SyncPerStep == nil || f.MemcpyPerStep == nil {
				t.Error("auto: per-step facts still null")
			}
		})
	}
}

// TestPhaseBreakdown: a vLLM-style trace with a prefill iteration
// ([0, 1000) us, a 500 us kernel) and a decode iteration ([2000, 2500) us
// on the host, whose 1000 us kernel launched at 2100 runs to 3200): the
// decode span extends to 3200, so prefill is 1000 us (kernel 500, busy
// 0.5) and decode 1200 us (kernel 1000) of the 3200 us window; the same
// with --step-marker auto, where the iterations are the steps.
func TestPhaseBreakdown(t *testing.T) {
	b := tracetest.New()
	b.X("user_annotation", "execute_context_1(512_512)_generation_0(0)", 0, 1000)
	b.Launch(100, 5, "prefill_gemm", 200, 500)
	b.X("user_annotation", "execute_context_0(0)_generation_4(4_9000)", 2000, 500)
	b.Launch(2100, 5, "decode_attention", 2200, 1000)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"", facts.StepMarkerAuto} {
		cfg := facts.DefaultConfig()
		cfg.StepMarker = marker
		f := facts.Derive(tr, cfg)
		if len(f.PhaseBreakdowns) != 2 {
			t.Fatalf("marker %q: phase_breakdown = %+v", marker, f.PhaseBreakdowns)
		}
		pre, dec := f.PhaseBreakdowns[0], f.PhaseBreakdowns[1]
		if pre.Phase != "prefill" || pre.Spans != 1 || pre.TimeUS != 1000 || pre.RolesUS["kernel"] != 500 || pre.GPUBusyRatio != 0.5 {
			t.Errorf("marker %q: prefill = %+v", marker, pre)
		}
		if dec.Phase != "decode" || dec.Spans != 1 || dec.TimeUS != 1200 || dec.RolesUS["kernel"] != 1000 || math.Abs(dec.WindowRatio-1200.0/f.WindowUS) > 1e-9 {
			t.Errorf("marker %q: decode = %+v (window %v us)", marker, dec, f.WindowUS)
		}
		var sum float64
		for _, v := range dec.RolesUS {
			sum += v
		}
		if math.Abs(sum-dec.TimeUS) > 1e-6 {
			t.Errorf("marker %q: decode roles sum to %v, not %v", marker, sum, dec.TimeUS)
		}
	}
}
