package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/script"
)

const teamScriptRule = `# METADATA
# title: No print calls in loops
# description: |
#   **Why it matters.** Printing is slow. **How to confirm.** Look. **Impact estimate.** Small.
# custom:
#   id: team-no-print
#   severity: low
#   category: script
#   requires: [calls]
#   references: [https://example.com/print]
package stepdoctor.rules.team_no_print

import rego.v1

finding contains f if {
	some c in input.calls
	c.name == "print"
	c.loop >= 0
	f := {"msg": "print in a loop", "impact": 0, "location": {"line": c.line, "column": c.column}}
}
`

func TestScriptRuleFromTeamDirWithScriptFileCase(t *testing.T) {
	dir := writeRules(t, map[string]string{"no_print.rego": teamScriptRule})
	if err := os.MkdirAll(filepath.Join(dir, "cases", "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cases", "scripts", "loop.py"), []byte("for i in range(3):\n    print(i)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := `rule: team-no-print
cases:
  - name: file fires
    script_file: scripts/loop.py
    expect: fires
    at_line: 2
  - name: wrong line
    script_file: scripts/loop.py
    expect: fires
    at_line: 1
  - name: quiet
    script: "print(1)\n"
    expect: quiet
`
	if err := os.WriteFile(filepath.Join(dir, "cases", "team-no-print.yaml"), []byte(cases), 0o644); err != nil {
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
	want := map[string]bool{"file fires": true, "wrong line": false, "quiet": true}
	for _, r := range res {
		if r.Pass != want[r.Name] {
			t.Errorf("case %q: pass=%v (%s: %s)", r.Name, r.Pass, r.Got, r.Detail)
		}
		// The failure places the finding in the case's script, by its file.
		if wantDetail := "at_line: expected the finding at line 1 of the case's script, got line 2, column 5 of " + filepath.Join(dir, "cases", "scripts", "loop.py"); r.Name == "wrong line" && r.Detail != wantDetail {
			t.Errorf("case %q: detail %q, want %q", r.Name, r.Detail, wantDetail)
		}
	}
	// Script rules do not run on trace facts, and trace rules not on scripts.
	fs, _, err := s.Evaluate(context.Background(), gpuFacts())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Category == CategoryScript {
			t.Errorf("trace evaluation ran script rule %s", f.Rule)
		}
	}
	sf, _ := script.Scan("x.py", []byte("for i in range(3):\n    print(i)\n"))
	fs, _, err = s.EvaluateScript(context.Background(), sf)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Category != CategoryScript || f.Location == nil || f.Location.File != "x.py" {
			t.Errorf("script finding %+v", f)
		}
	}
}

func TestScriptRuleLoadErrors(t *testing.T) {
	for name, tt := range map[string]struct{ file, src, want string }{
		"unknown script fact":    {"a.rego", strings.Replace(teamScriptRule, "c.name ==", "c.nme ==", 1), "nme"},
		"trace fact in requires": {"a.rego", strings.Replace(teamScriptRule, "requires: [calls]", "requires: [gpu_idle_ratio]", 1), "no such script fact"},
		"expr script rule":       {"a.yaml", "id: x-rule\ntitle: t\nseverity: low\ncategory: script\nrequires: [calls]\ndoc: d\nreferences: [https://e.com]\nwhen: \"true\"\nimpact: \"0\"\nmessage: m\n", "write the rule in Rego"},
	} {
		dir := writeRules(t, map[string]string{tt.file: tt.src})
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", name, err, tt.want)
		}
	}
}

func TestScriptFindingNeedsLocation(t *testing.T) {
	dir := writeRules(t, map[string]string{"a.rego": strings.Replace(teamScriptRule, `, "location": {"line": c.line, "column": c.column}`, "", 1)})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sf, _ := script.Scan("x.py", []byte("for i in range(3):\n    print(i)\n"))
	if _, _, err := s.EvaluateScript(context.Background(), sf); err == nil || !strings.Contains(err.Error(), "no location") {
		t.Errorf("got %v", err)
	}
}

// TestScriptRulesOnManyFunctions: a script of a thousand functions, each
// handed the loader in the epoch loop, is evaluated within the rules'
// time limit. dataloader-persistent-workers joined every call with every
// function and loop in Rego and timed out (a rule error); it reads the
// scanner's functions[].iterates from sets now.
func TestScriptRulesOnManyFunctions(t *testing.T) {
	// A thousand functions handed the loader, then a thousand that loop
	// over the module's loader by name, each called from the epoch loop.
	byParam := manyFunctions("def f%d(a, b):\n    for x in b:\n        pass\n", "    f%d(model, loader)\n")
	byName := manyFunctions("def f%d(epoch):\n    for x in loader:\n        pass\n", "    f%d(epoch)\n")
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{byParam, byName} {
		sf, err := script.Scan("many.py", []byte(src))
		if err != nil {
			t.Skip("script scanner:", err)
		}
		fs, _, err := s.EvaluateScript(context.Background(), sf)
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		found := false
		for _, f := range fs {
			found = found || f.Rule == "dataloader-persistent-workers" && strings.Contains(f.Message, "f0() iterates it")
		}
		if !found {
			t.Errorf("no dataloader-persistent-workers finding naming f0(): %+v", fs)
		}
	}
}

// manyFunctions is a script with a DataLoader of worker processes, a
// thousand defs from def (formatted with their number) and a 100-epoch
// loop making a thousand calls from call.
func manyFunctions(def, call string) string {
	var b strings.Builder
	b.WriteString("from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n")
	for i := range 1000 {
		fmt.Fprintf(&b, def, i)
	}
	b.WriteString("for epoch in range(100):\n")
	for i := range 1000 {
		fmt.Fprintf(&b, call, i)
	}
	return b.String()
}
