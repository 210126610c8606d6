package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/script"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// brokenScriptRule fires on every script with a finding that has no
// message: an error of this rule only.
const brokenScriptRule = `# METADATA
# title: Broken team script rule
# description: Always fails.
# custom:
#   id: team-broken
#   severity: low
#   category: script
#   requires: [calls]
#   references: [https://example.com]
package stepdoctor.rules.team_broken

import rego.v1

finding contains f if {
	f := {"msg": "", "impact": 0, "location": {"line": 1, "column": 1}}
}
`

// TestLintRuleErrors: a built-in rule that times out (timeout: 1ns in the
// config) no longer exits 2 with nothing reported: lint exits 0, names the
// failures on stderr and in every format, and exits 1 only when
// --fail-on-rule-error or fail_on_rule_error: true asks. A failing team rule
// leaves the built-in rules' findings in place.
func TestLintRuleErrors(t *testing.T) {
	if !script.Available {
		t.Skip("built without the Python parser")
	}
	py := "../../testdata/scripts/every_mistake.py"
	dir := t.TempDir()
	tiny := writeFile(t, dir, "tiny.yaml", "timeout: 1ns\n")
	strict := writeFile(t, dir, "strict.yaml", "timeout: 1ns\nfail_on_rule_error: true\n")

	code, out, errs := runCLI(t, "lint", "--config", tiny, py)
	if code != 0 {
		t.Fatalf("timed-out rules: exit %d, want 0: %s", code, errs)
	}
	if !strings.Contains(out, ": rule failed: evaluate rule ") || !strings.Contains(out, "timed out after 1ns") {
		t.Errorf("text output does not report the timed-out rules:\n%s", out)
	}
	if !strings.Contains(errs, "warning: "+py+": evaluate rule ") {
		t.Errorf("stderr does not warn: %s", errs)
	}
	for format, want := range map[string]string{
		"md":    "**Rule failed**, so findings may be missing: evaluate rule ",
		"json":  `"rule_errors": [`,
		"sarif": `"id": "rule-failed"`,
	} {
		code, out, errs := runCLI(t, "lint", "--config", tiny, "--format", format, py)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, output lacks %q: %s\n%.2000s", format, code, want, errs, out)
		}
	}
	if code, _, _ := runCLI(t, "lint", "--config", tiny, "--fail-on-rule-error", py); code != 1 {
		t.Errorf("--fail-on-rule-error: exit %d, want 1", code)
	}
	if code, _, errs := runCLI(t, "lint", "--config", strict, py); code != 1 || !strings.Contains(errs, "rule evaluation(s) failed") {
		t.Errorf("fail_on_rule_error: true: exit %d, want 1: %s", code, errs)
	}

	team := t.TempDir()
	writeFile(t, team, "broken.rego", brokenScriptRule)
	code, out, errs = runCLI(t, "lint", "--rules", team, "--format", "json", py)
	if code != 0 {
		t.Fatalf("broken team rule: exit %d: %s", code, errs)
	}
	var doc struct {
		Scripts []struct {
			Findings   []struct{ Rule string } `json:"findings"`
			RuleErrors []string                `json:"rule_errors"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scripts) != 1 || len(doc.Scripts[0].Findings) < 10 || len(doc.Scripts[0].RuleErrors) != 1 ||
		!strings.Contains(doc.Scripts[0].RuleErrors[0], "team-broken") {
		t.Errorf("want the built-in findings and one error for team-broken: %+v", doc.Scripts)
	}
}

// TestAnalyzeFailOnRuleError: a team rule that fails leaves exit 0 unless
// --fail-on-rule-error or fail_on_rule_error: true asks, and is listed in
// the terminal summary as well as in the other formats' health diagnostics.
func TestAnalyzeFailOnRuleError(t *testing.T) {
	dir := t.TempDir()
	team := filepath.Join(dir, "team")
	if err := os.Mkdir(team, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, team, "bomb.yaml", `id: team-bomb
title: Bomb
severity: low
category: host-overhead
requires: [steps_count]
when: steps_count >= 0
impact: 'len(replace(repeat("a", 1e5), "a", repeat("a", 1e5))) > 0 ? 0.01 : 0'
message: "boom"
doc: A rule that builds too much.
references: [https://pytorch.org/docs/stable/profiler.html]
`)
	strict := writeFile(t, dir, "strict.yaml", "fail_on_rule_error: true\n")
	tr := "../../testdata/traces/dataloader_bound.pt.trace.json"
	code, out, _ := runCLI(t, "analyze", "--rules", team, tr)
	if code != 0 || !strings.Contains(out, "rule failed ") || !strings.Contains(out, "team-bomb") {
		t.Errorf("default: exit %d, want 0 and the failure in the summary:\n%s", code, out)
	}
	for f, want := range map[string]string{"md": "Rule errors", "json": `"rule_errors": [`, "html": "rule error", "sarif": `"id": "rule-failed"`} {
		_, out, _ := runCLI(t, "analyze", "--rules", team, "--format", f, tr)
		if !strings.Contains(out, "team-bomb") || !strings.Contains(out, want) && !strings.Contains(strings.ToLower(out), want) {
			t.Errorf("--format %s does not list the failed rule (want %q)", f, want)
		}
	}
	if code, _, errs := runCLI(t, "analyze", "--rules", team, "--fail-on-rule-error", tr); code != 1 || !strings.Contains(errs, "team-bomb") {
		t.Errorf("--fail-on-rule-error: exit %d, want 1: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "analyze", "--rules", team, "--config", strict, tr); code != 1 {
		t.Errorf("fail_on_rule_error: true: exit %d, want 1", code)
	}
	if code, _, _ := runCLI(t, "analyze", "--config", strict, tr); code != 0 {
		t.Errorf("no failing rule: exit %d, want 0", code)
	}
}

// TestDiffRuleErrors: diff no longer drops the rules that failed on either
// side: it warns on stderr, lists them in every format, and exits 1 only
// when --fail-on-rule-error or fail_on_rule_error: true asks.
func TestDiffRuleErrors(t *testing.T) {
	dir := t.TempDir()
	team := filepath.Join(dir, "team")
	if err := os.Mkdir(team, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, team, "boom.rego", `# METADATA
# title: Boom
# description: Fails on every trace.
# custom:
#   id: team-boom
#   severity: low
#   category: host-overhead
#   requires: [steps_count]
#   references: [https://example.com]
package stepdoctor.rules.team_boom

import rego.v1

finding contains f if {
	n := to_number("abc")
	f := {"msg": "boom", "impact": n}
}
`)
	cfg := writeFile(t, dir, "c.yaml", "rules: ["+team+"]\n")
	strict := writeFile(t, dir, "strict.yaml", "rules: ["+team+"]\nfail_on_rule_error: true\n")
	a, b := "../../testdata/traces/dataloader_bound.pt.trace.json", "../../testdata/traces/healthy.pt.trace.json"
	code, out, errs := runCLI(t, "diff", "--config", cfg, a, b)
	if code != 0 || strings.Count(errs, "warning: ") != 2 || !strings.Contains(errs, "team-boom") || !strings.Contains(out, "rule failed ") {
		t.Errorf("default: exit %d, want 0, two warnings and the failures in the summary:\n%s\n%s", code, errs, out)
	}
	for format, want := range map[string]string{"md": "## Rule errors (2)", "html": "Rule errors (2)", "json": `"rule_errors": [`} {
		_, out, _ := runCLI(t, "diff", "--config", cfg, "--format", format, a, b)
		if !strings.Contains(out, want) || !strings.Contains(out, "team-boom") {
			t.Errorf("--format %s does not list the failed rules (want %q)", format, want)
		}
	}
	if code, _, errs := runCLI(t, "diff", "--rules", team, a, b); code != 0 || strings.Count(errs, "warning: ") != 2 {
		t.Errorf("--rules: exit %d, want 0 and two warnings: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "diff", "--config", cfg, "--fail-on-rule-error", a, b); code != 1 {
		t.Errorf("--fail-on-rule-error: exit %d, want 1", code)
	}
	if code, _, _ := runCLI(t, "diff", "--config", strict, a, b); code != 1 {
		t.Errorf("fail_on_rule_error: true: exit %d, want 1", code)
	}
	if code, _, _ := runCLI(t, "diff", a, b); code != 0 {
		t.Errorf("no failing rule: exit %d, want 0", code)
	}
}
