package rules

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

func TestBuiltinLoads(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	// The trace rules of issue 5 (script rules: TestBuiltinScriptRules).
	want := []string{
		"amp-not-used", "dataloader-bound", "elementwise-fusion", "exposed-communication",
		"frequent-memcpy", "gpu-activity-missing", "gpu-underutilized", "host-sync-in-step",
		"idle-gap-dataloader", "idle-gap-launch", "idle-gap-sync", "launch-bound",
		"memory-growth", "memory-headroom", "memory-near-capacity", "optimizer-foreach",
		"optimizer-zero-grad", "pageable-memcpy", "profile-too-short", "profiler-overhead-trace",
		"repeated-small-op", "step-time-variance",
	}
	have := map[string]Rule{}
	for _, r := range s.Rules() {
		have[r.ID] = r
	}
	for _, id := range want {
		r, ok := have[id]
		if !ok {
			t.Errorf("built-in rule %s missing", id)
			continue
		}
		if len(r.SuppressedBy) > 0 {
			t.Errorf("rule %s: suppressed_by %v; built-in rules partition time instead of hiding each other", id, r.SuppressedBy)
		}
	}
}

// TestBuiltinCases runs every case file of the built-in pack; a quiet case
// that fires (or the reverse) fails.
func TestBuiltinCases(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunCasesFS(s, builtin.FS, "cases")
	if err != nil {
		t.Fatal(err)
	}
	fires := map[string]int{}
	quiet := map[string]int{}
	for _, r := range res {
		t.Run(r.Rule+"/"+r.Name, func(t *testing.T) {
			if !r.Pass {
				t.Errorf("%s:%d: got %s: %s", r.File, r.Line, r.Got, r.Detail)
			}
		})
		switch r.Got {
		case ExpectFires:
			fires[r.Rule]++
		case ExpectQuiet:
			quiet[r.Rule]++
		}
	}
	for _, r := range s.Rules() {
		if fires[r.ID] == 0 || quiet[r.ID] == 0 {
			t.Errorf("rule %s: needs at least one case that fires (%d) and one that stays quiet (%d)", r.ID, fires[r.ID], quiet[r.ID])
		}
	}
}
