package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// evalAll evaluates s on facts that make most built-in rules compare their
// params (a non-finite param used to panic inside OPA's number comparison).
func evalAll(t *testing.T, s *Set) {
	t.Helper()
	f, err := CaseFacts(map[string]any{"has_steps": true, "has_gpu": true, "dataloader_time_ratio": 0.5, "gpu_idle_ratio": 0.6, "window_us": 1e6})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = s.Evaluate(context.Background(), f)
}

// TestConfigParamNotFinite: .nan, .inf and -.inf in .stepdoctor.yaml params
// are refused at load, naming the file, the rule and the param; they used
// to panic at evaluation.
func TestConfigParamNotFinite(t *testing.T) {
	for _, v := range []string{".nan", ".inf", "-.inf", ".NaN", "+.Inf"} {
		dir := t.TempDir()
		path := filepath.Join(dir, ConfigFileName)
		os.WriteFile(path, []byte("params: {dataloader-bound: {min_ratio: "+v+"}}\n"), 0o644)
		c, err := LoadConfigFile(path)
		if err == nil {
			var s *Set
			if s, err = LoadConfigured(c); err == nil {
				evalAll(t, s)
			}
		}
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "dataloader-bound.min_ratio") || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("min_ratio %s: %v, want an error naming %s, dataloader-bound.min_ratio and not a finite number", v, err, path)
		}
	}
}

// TestConfigParamOutOfRange: a ratio param outside 0..1 and a negative
// count or time are refused.
func TestConfigParamOutOfRange(t *testing.T) {
	for _, tt := range []struct{ param, v string }{
		{"dataloader-bound: {min_ratio: 1.5}", "dataloader-bound.min_ratio"},
		{"dataloader-bound: {min_ratio: -0.1}", "dataloader-bound.min_ratio"},
		{"frequent-memcpy: {min_per_step: -5}", "frequent-memcpy.min_per_step"},
	} {
		c, err := ParseConfig([]byte("params: {" + tt.param + "}\n"))
		if err == nil {
			_, err = LoadConfigured(c)
		}
		if err == nil || !strings.Contains(err.Error(), tt.v) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: %v, want an out-of-range error naming %s", tt.param, err, tt.v)
		}
	}
}

const nanRego = `# METADATA
# title: NaN budget
# description: x
# custom:
#   id: team-nan
#   severity: low
#   category: profiling-setup
#   requires: [gpu_idle_ratio]
#   params:
#     max_idle: %s
#   references: [https://example.com]
package stepdoctor.rules.team_nan

import rego.v1

params := data.stepdoctor.params["team-nan"]

finding contains f if {
	input.gpu_idle_ratio > params.max_idle
	f := {"msg": "idle", "impact": 0.1}
}
`

const nanExpr = `id: team-nan-expr
title: X
severity: low
category: profiling-setup
requires: [gpu_idle_ratio]
params: {max_idle: %s}
when: gpu_idle_ratio > params.max_idle
impact: "0"
message: x
doc: x
references: [https://example.com]
`

// TestRuleParamNotFinite: a non-finite default in Rego METADATA or an expr
// rule's params is a load error naming the file, rule and param.
func TestRuleParamNotFinite(t *testing.T) {
	for name, src := range map[string]string{"r.rego": nanRego, "r.yaml": nanExpr} {
		for _, v := range []string{".nan", ".inf", "-.inf"} {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(src, "%s", v, 1)), 0o644)
			s, err := Load(dir)
			if err == nil {
				evalAll(t, s)
			}
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "max_idle") || !strings.Contains(err.Error(), "not a finite number") {
				t.Errorf("%s with max_idle %s: %v", name, v, err)
			}
		}
	}
}

// TestCaseParamNotFinite: a case file's params and impact bounds must be
// finite; the parse error names the case.
func TestCaseParamNotFinite(t *testing.T) {
	for _, text := range []string{
		"rule: dataloader-bound\ncases:\n  - name: nan\n    facts: {has_steps: true}\n    params: {min_ratio: .nan}\n    expect: quiet\n",
		"rule: dataloader-bound\ncases:\n  - name: inf\n    facts: {has_steps: true}\n    impact: [0, .inf]\n    expect: quiet\n",
	} {
		_, err := ParseCases([]byte(text))
		if err == nil || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("ParseCases(%q) = %v, want a not-a-finite-number error", text, err)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("rule: dataloader-bound\ncases:\n  - name: nan\n    facts: {has_steps: true, dataloader_time_ratio: 0.5}\n    params: {min_ratio: .nan}\n    expect: quiet\n"), 0o644)
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunCases(s, dir); err == nil || !strings.Contains(err.Error(), "c.yaml") {
		t.Errorf("RunCases: %v, want an error naming c.yaml", err)
	}
}

// TestRegoImpactOverflow: a Rego impact (or evidence value) beyond float64
// range is an evaluation error naming the rule and the number; it used to
// say only "finding impact is json.Number".
func TestRegoImpactOverflow(t *testing.T) {
	for what, finding := range map[string]string{
		"impact":   `{"msg": "x", "impact": 1e400}`,
		"evidence": `{"msg": "x", "impact": 0.1, "evidence": [{"name": "n", "value": -1e400}]}`,
	} {
		dir := t.TempDir()
		src := strings.Replace(strings.Replace(nanRego, "%s", "0.5", 1), `{"msg": "idle", "impact": 0.1}`, finding, 1)
		os.WriteFile(filepath.Join(dir, "r.rego"), []byte(src), 0o644)
		s, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := CaseFacts(map[string]any{"gpu_idle_ratio": 0.9})
		_, _, err = s.Evaluate(context.Background(), f)
		if err == nil || !strings.Contains(err.Error(), "team-nan") || !strings.Contains(err.Error(), "not a finite number") || strings.Contains(err.Error(), "json.Number") {
			t.Errorf("%s: %v, want an error naming team-nan and a non-finite number", what, err)
		}
	}
}
