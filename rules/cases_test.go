package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunCasesTeamDir(t *testing.T) {
	dir := writeRules(t, map[string]string{"many_memcpy.yaml": goodExpr})
	if err := os.Mkdir(filepath.Join(dir, "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := `rule: team-many-memcpy
cases:
  - name: fires at 12 per step
    facts: {has_gpu: true, memcpy_per_step: 12}
    expect: fires
    message_contains: ["12 copies per step"]
  - name: wrongly expected quiet
    facts: {has_gpu: true, memcpy_per_step: 12}
    expect: quiet
  - name: wrongly expected fires
    facts: {has_gpu: true, memcpy_per_step: 3}
    expect: fires
  - name: wrong message
    facts: {has_gpu: true, memcpy_per_step: 12.5}
    expect: fires
    message_contains: ["13 copies"]
  - name: null fact
    facts: {}
    expect: not_evaluated
  - name: param override
    facts: {has_gpu: true, memcpy_per_step: 12}
    params: {max_per_step: 20}
    expect: quiet
`
	if err := os.WriteFile(filepath.Join(dir, "cases", "team-many-memcpy.yaml"), []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunCases(s, filepath.Join(dir, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"fires at 12 per step": true, "wrongly expected quiet": false, "wrongly expected fires": false,
		"wrong message": false, "null fact": true, "param override": true,
	}
	if len(res) != len(want) {
		t.Fatalf("got %d results", len(res))
	}
	for _, r := range res {
		if r.Pass != want[r.Name] {
			t.Errorf("case %q: pass=%v (got %s: %s), want pass=%v", r.Name, r.Pass, r.Got, r.Detail, want[r.Name])
		}
		if r.Line == 0 || !strings.HasSuffix(r.File, "team-many-memcpy.yaml") {
			t.Errorf("case %q: location %s:%d", r.Name, r.File, r.Line)
		}
	}
	if res[1].Detail != "expected quiet, got a finding: 12 copies per step" {
		t.Errorf("detail %q", res[1].Detail)
	}
	if !strings.Contains(res[3].Detail, `message "12.5 copies per step" does not contain "13 copies"`) {
		t.Errorf("detail %q", res[3].Detail)
	}
}

func TestParseCasesErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"cases: []\n", "missing field rule"},
		{"rule: x\n", "no cases"},
		{"rule: x\ncases:\n  - name: a\n    expect: fire\n", `expect "fire" is not fires, quiet or not_evaluated`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    facts: {gpu_idel_ratio: 1}\n", `unknown field "gpu_idel_ratio"`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n  - name: a\n    expect: quiet\n", `duplicate name`},
		{"rule: x\ncases:\n  - name: a\n    expct: fires\n", `field expct not found (not a case key: see rules.Case)`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    facts: {has_gpu: \"yes\"}\n", `fact has_gpu takes true or false, not a string`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    severity: critical\n", `severity "critical" is not high, medium, low or info`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    confidence: definitely\n", `confidence "definitely" is not confirmed or likely`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    impact: [0.2, 0.05]\n", `has its min above its max`},
		{"rule: x\ncases:\n  - name: a\n    expect: fires\n    at_line: -3\n", `at_line -3 is not a line`},
		{"rule: x\ncases:\n  - name: a\n    expect: quiet\n    message_contains: [zzz]\n", `message_contains checks a finding, and expect quiet has none`},
		{"rule: x\ncases:\n  - name: a\n    expect: not_evaluated\n    severity: high\n", `severity checks a finding, and expect not_evaluated has none`},
	} {
		_, err := ParseCases([]byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCases(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestRunCaseWrongInput: a script given to a trace rule, or facts to a
// script rule, is an error, not an evaluation over zero facts.
func TestRunCaseWrongInput(t *testing.T) {
	s := mustBuiltin(t)
	for _, c := range []struct {
		rule string
		cs   Case
		want string
	}{
		{"dataloader-bound", Case{Name: "a", Script: "x = 1\n", Expect: ExpectQuiet}, "is a trace rule (category input-pipeline): give the case facts, not a script"},
		{"dataloader-num-workers", Case{Name: "b", Facts: map[string]any{"has_steps": true}, Expect: ExpectQuiet}, "is a script rule: give the case a script"},
	} {
		r := RunCase(s, c.rule, c.cs)
		if r.Pass || !strings.Contains(r.Detail, c.want) {
			t.Errorf("%s: pass %v, detail %q; want a failure with %q", c.rule, r.Pass, r.Detail, c.want)
		}
	}
}

func TestRunCasesUnknownRule(t *testing.T) {
	dir := writeRules(t, map[string]string{"x.yaml": "rule: no-such-rule\ncases:\n  - name: a\n    expect: quiet\n"})
	_, err := RunCases(mustBuiltin(t), dir)
	if err == nil || !strings.Contains(err.Error(), `no enabled rule "no-such-rule"`) {
		t.Fatalf("got %v", err)
	}
}

func TestExprHelpersAndNullGuards(t *testing.T) {
	rule := strings.NewReplacer(
		`when: memcpy_per_step > params.max_per_step`, `when: memcpy_per_step > params.max_per_step && (dataloader_single_process ?? false) == false && rank == nil`,
		`message: "{{ memcpy_per_step }} copies per step"`, `message: "{{ fixed(memcpy_per_step, 2) }} per step, {{ pct(0.1234) }}, {{ sprintf('%s/%d', 'a', 3) }}, {{ memcpy_time_ratio ?? 'n/a' }}"`,
	).Replace(goodExpr)
	dir := writeRules(t, map[string]string{"a.yaml": rule})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := RunCase(s, "team-many-memcpy", Case{
		Name: "helpers", Facts: map[string]any{"memcpy_per_step": 12}, Expect: ExpectFires,
		MessageContains: []string{"12.00 per step, 12.3%, a/3, n/a"},
	})
	if !r.Pass {
		t.Fatalf("%s: %s", r.Got, r.Detail)
	}
}
