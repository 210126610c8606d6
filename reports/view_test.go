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
