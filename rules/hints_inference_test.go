package rules

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestHintForInferenceAndSingleRank: what makes a rule not apply comes
// before what would let it run: an inference trace is told the training
// rules do not apply (not to add steps), a world_size 1 job that it has no
// peers (not to analyze other ranks); a multi-rank job still is.
func TestHintForInferenceAndSingleRank(t *testing.T) {
	one, eight := int64(1), int64(8)
	inference := &facts.Facts{HasGPU: true, WorldSize: &one, StepMarkerFound: &facts.StepMarker{Source: "auto", Label: "vLLM execute annotations", Steps: 1}}
	training := &facts.Facts{HasGPU: true, HasBackward: true, HasSteps: true, WorldSize: &eight}
	for _, tt := range []struct {
		missing []string
		f       *facts.Facts
		want    string
	}{
		{[]string{"has_steps", "zero_grad_fill_per_step"}, inference, HintTrain},
		{[]string{"has_steps", "has_backward", "optimizer_time_ratio"}, inference, HintTrain},
		{[]string{"rank_count"}, inference, HintRanksSingle},
		{[]string{"comm_kernel_time_ratio", "exposed_comm_ratio"}, inference, HintCommSingle},
		{[]string{"rank_count"}, training, HintRanks},
		{[]string{"comm_kernel_time_ratio"}, training, HintComm},
	} {
		if got := hintFor(tt.missing, tt.f); got != tt.want {
			t.Errorf("hintFor(%v) = %q, want %q", tt.missing, got, tt.want)
		}
	}
}
