package reports

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestStepHeadline: the headline gives the median first when three steps
// or more have a mean more than skewedStep off it, else the mean.
func TestStepHeadline(t *testing.T) {
	for _, tt := range []struct {
		steps int
		s     facts.StepStats
		per   []facts.StepBreakdown
		want  string
	}{
		{5, facts.StepStats{Mean: 78860, P50: 95580}, nil, "median step 95.58 ms (mean 78.86 ms)"},
		{5, facts.StepStats{Mean: 100000, P50: 95000}, nil, "mean step 100.00 ms"},
		{2, facts.StepStats{Mean: 4670, P50: 4670}, nil, "mean step 4.67 ms"},
		{2, facts.StepStats{Mean: 4670, P50: 9290}, nil, "mean step 4.67 ms"},
		// The mi250 trace: ProfilerStep#2 is a 49 us stub at the window's end.
		{2, facts.StepStats{Mean: 4670, P50: 4670}, []facts.StepBreakdown{{DurUS: 9290}, {DurUS: 49}}, "mean step 4.67 ms; the last of 2 steps lasts 49.0 µs, a stub the recording ended in (the other lasts 9.29 ms)"},
		{3, facts.StepStats{Mean: 9000, P50: 9000}, []facts.StepBreakdown{{DurUS: 9000}, {DurUS: 9100}, {DurUS: 8900}}, "mean step 9.00 ms"},
		{3, facts.StepStats{Mean: 6000, P50: 9000}, []facts.StepBreakdown{{DurUS: 9000}, {DurUS: 9000}, {DurUS: 10}}, "median step 9.00 ms (mean 6.00 ms); the last of 3 steps lasts 10.0 µs, a stub the recording ended in (the other 2 average 9.00 ms)"},
	} {
		if got := stepHeadline(tt.steps, tt.s, tt.per); got != tt.want {
			t.Errorf("stepHeadline(%d, %+v) = %q, want %q", tt.steps, tt.s, got, tt.want)
		}
	}
}

// TestVerdictLeadingQueue: the idle before the GPU's first activity is
// given as a whole, with the part that had work queued beside it, and the
// busy share from then on is over the time after the first activity.
func TestVerdictLeadingQueue(t *testing.T) {
	f64 := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name                 string
		idle, queued, before float64
		busy                 float64
		want                 string
	}{
		// vLLM graph replay: a short host lead, then the replay queued
		// behind work from before the trace.
		{"vllm", 0.439, 0.409, 0.438, 0.56, "GPU idle 43.9% of the window (43.8% before its first recorded activity, 40.9% of the window with launched work queued behind GPU work the trace did not record; busy 99.6% from then on)"},
		// All of the lead queued.
		{"queued", 0.5, 0.409, 0.409, 0.5, "GPU idle 50.0% of the window (40.9% before its first recorded activity: launched work queued behind GPU work the trace did not record; busy 84.6% from then on)"},
		// backward_thread: 95.6% before the only kernel, 15.5% of it queued.
		{"mostly-untraced", 0.9999, 0.155, 0.956, 0.0001, "GPU idle 100.0% of the window (95.6% before its first recorded activity, 15.5% of the window with launched work queued behind GPU work the trace did not record; busy 0.2% from then on)"},
		{"no-lead", 0.3, 0.01, 0.2, 0.7, "GPU idle 30.0% of the window"},
	} {
		f := &facts.Facts{HasGPU: true, GPUIdleRatio: f64(tt.idle), GPUIdleQueuedLeadingRatio: f64(tt.queued), GPUIdleLeadingRatio: f64(tt.before), GPUBusyRatio: f64(tt.busy)}
		if got := verdict(f); got != tt.want {
			t.Errorf("%s: verdict = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestStartupNote: one-off start-up of startupHeadline of the window or
// more, runtime calls and operators together, is named in the headline
// with its largest culprit.
func TestStartupNote(t *testing.T) {
	f64 := func(v float64) *float64 { return &v }
	snippet := &facts.Facts{HasGPU: true, GPUIdleRatio: f64(0.982), GPUIdleWarmupRatio: f64(0.859),
		IdleCulprits: map[string][]facts.Culprit{"warmup": {{Name: "cudaLaunchKernel", IdleUS: 1414}}}}
	if got, want := verdict(snippet), "GPU idle 98.2% of the window (85.9% of the window in one-off start-up, most in cudaLaunchKernel)"; got != want {
		t.Errorf("verdict = %q, want %q", got, want)
	}
	ops := &facts.Facts{HasGPU: true, GPUIdleRatio: f64(0.971), GPUIdleWarmupRatio: f64(0.05), GPUIdleCPUOpOneOffRatio: f64(0.22),
		IdleCulprits: map[string][]facts.Culprit{"warmup": {{Name: "cudaFree", IdleUS: 500}}, facts.OneOffOpCulprits: {{Name: "aten::to", IdleUS: 2194}}}}
	if got, want := startupNote(ops), "27.0% of the window in one-off start-up, most in aten::to"; got != want {
		t.Errorf("startupNote = %q, want %q", got, want)
	}
	steady := &facts.Facts{HasGPU: true, GPUIdleRatio: f64(0.3), GPUIdleWarmupRatio: f64(0.1), GPUIdleCPUOpOneOffRatio: f64(0.05)}
	if got := startupNote(steady); got != "" {
		t.Errorf("startupNote below %v = %q, want none", startupHeadline, got)
	}
}
