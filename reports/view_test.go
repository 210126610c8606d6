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
		want  string
	}{
		{5, facts.StepStats{Mean: 78860, P50: 95580}, "median step 95.58 ms (mean 78.86 ms)"},
		{5, facts.StepStats{Mean: 100000, P50: 95000}, "mean step 100.00 ms"},
		{2, facts.StepStats{Mean: 4670, P50: 4670}, "mean step 4.67 ms"},
		{2, facts.StepStats{Mean: 4670, P50: 9290}, "mean step 4.67 ms"},
	} {
		if got := stepHeadline(tt.steps, tt.s); got != tt.want {
			t.Errorf("stepHeadline(%d, %+v) = %q, want %q", tt.steps, tt.s, got, tt.want)
		}
	}
}
