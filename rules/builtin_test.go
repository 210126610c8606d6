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
	want := []string{"dataloader-bound", "gpu-underutilized", "host-sync-in-step", "launch-bound", "pageable-memcpy", "profile-too-short"}
	var got []Rule
	for _, r := range s.Rules() {
		if r.Category != CategoryScript { // script rules: TestBuiltinScriptRules
			got = append(got, r)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rules, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.ID != want[i] {
			t.Errorf("rule %d: got %s, want %s", i, r.ID, want[i])
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
