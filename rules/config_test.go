package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`disable: [memory-headroom]
severity: {pageable-memcpy: low}
params: {dataloader-bound: {min_ratio: 0.1}}
rules: [team]
timeout: 500ms
`))
	if err != nil {
		t.Fatal(err)
	}
	rc := c.RuleConfig()
	if len(rc.Disable) != 1 || rc.Severity["pageable-memcpy"] != SeverityLow || rc.Params["dataloader-bound"]["min_ratio"] != 0.1 || rc.Timeout != 500*time.Millisecond {
		t.Errorf("RuleConfig %+v", rc)
	}
	if c, err := ParseConfig(nil); err != nil || len(c.Disable) != 0 {
		t.Errorf("empty config: %+v %v", c, err)
	}
	for _, tt := range []struct{ text, want string }{
		{"disabel: [x]\n", "field disabel not found"},
		{"timeout: -1s\n", "positive Go duration"},
		{"timeout: 87600h\n", "at most 30s"}, // the config is untrusted: no rule runs for hours
		{"disable: launch-bound\n", "cannot unmarshal"},
	} {
		if _, err := ParseConfig([]byte(tt.text)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseConfig(%q) = %v, want %q", tt.text, err, tt.want)
		}
	}
}

func TestLoadConfigured(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "team"), 0o755)
	os.WriteFile(filepath.Join(dir, "team", "r.yaml"), []byte(`id: team-x
title: X
severity: low
category: profiling-setup
requires: [window_us]
when: window_us > 0
impact: "0"
message: x
doc: x
references: [https://example.com]
`), 0o644)
	cfgPath := filepath.Join(dir, ConfigFileName)
	os.WriteFile(cfgPath, []byte("rules: [team]\ndisable: [memory-headroom]\nseverity: {launch-bound: low}\n"), 0o644)
	if p, err := FindConfig(dir); err != nil || p != cfgPath {
		t.Fatalf("FindConfig = %q, %v", p, err)
	}
	if p, err := FindConfig(t.TempDir()); err != nil || p != "" {
		t.Errorf("FindConfig in an empty dir = %q, %v", p, err)
	}
	c, err := LoadConfigFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rules[0] != filepath.Join(dir, "team") {
		t.Errorf("rule dir not relative to the config file: %v", c.Rules)
	}
	s, err := LoadConfigured(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Rule("team-x"); !ok {
		t.Error("team rule not loaded")
	}
	if _, ok := s.Rule("memory-headroom"); ok {
		t.Error("disabled rule still enabled")
	}
	if r, _ := s.Rule("launch-bound"); r.Severity != SeverityLow {
		t.Errorf("severity not pinned: %s", r.Severity)
	}
	os.WriteFile(cfgPath, []byte("disable: [nope]\n"), 0o644)
	c, _ = LoadConfigFile(cfgPath)
	if _, err := LoadConfigured(c); err == nil || !strings.Contains(err.Error(), cfgPath) || !strings.Contains(err.Error(), "disable rule nope") {
		t.Errorf("bad config error %v does not name the file and rule", err)
	}
	if _, err := LoadConfigFile(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing config: %v", err)
	}
}

// TestRunRegoTests runs the example team directory's Rego tests and a
// failing one.
func TestRunRegoTests(t *testing.T) {
	s, err := Load(filepath.Join("examples"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunRegoTests(t.Context(), s, "examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("got %d results, want 3: %+v", len(res), res)
	}
	for _, r := range res {
		if !r.Pass || r.File == "" || r.Line == 0 {
			t.Errorf("%+v", r)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x_test.rego"), []byte("package x_test\n\nimport rego.v1\n\ntest_lib if { data.stepdoctor.lib.pct(0.5) == \"50.0%\" }\n\ntest_bad if { data.stepdoctor.lib.pct(0.5) == \"49%\" }\n\ntest_params if { data.stepdoctor.params[\"launch-bound\"].min_kernels == 50 }\n"), 0o644)
	res, err = RunRegoTests(t.Context(), mustBuiltin(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range res {
		got[r.Name] = r.Pass
	}
	if !got["test_lib"] || got["test_bad"] || !got["test_params"] || len(got) != 3 {
		t.Errorf("results %v", got)
	}
	if res, err := RunRegoTests(t.Context(), s, t.TempDir()); err != nil || res != nil {
		t.Errorf("no tests: %v %v", res, err)
	}
}

// TestFactsSection: the facts: section sets fact thresholds field by
// field over the defaults; a partly filled section keeps the rest.
func TestFactsSection(t *testing.T) {
	c, err := ParseConfig([]byte("facts:\n  short_kernel_ns: 5000\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := facts.DefaultConfig()
	want.ShortKernelNS = 5000
	if got := c.FactsConfig(); got != want {
		t.Errorf("FactsConfig = %+v, want %+v", got, want)
	}
	if c, err := ParseConfig([]byte("disable: [x]\n")); err != nil || c.FactsConfig() != facts.DefaultConfig() {
		t.Errorf("no facts section: %+v %v", c, err)
	}
	var none *FileConfig
	if none.FactsConfig() != facts.DefaultConfig() {
		t.Error("nil config: not the defaults")
	}
	for _, tt := range []struct{ text, want string }{
		{"facts:\n  short_kernel_us: 5\n", "field short_kernel_us not found"},
		{"facts:\n  examples: 0\n", "examples: want a positive number"},
		{"facts:\n  chain_min_length: -1\n", "chain_min_length: want a positive number"},
		{"facts: 3\n", "want a mapping"},
		{"facts:\n  examples: many\n", "cannot unmarshal"},
	} {
		if _, err := ParseConfig([]byte(tt.text)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseConfig(%q) = %v, want %q", tt.text, err, tt.want)
		}
	}
}

// TestConfigEmptyRulesDir: an empty rules: entry is refused (it would
// name the config's own directory, or the config file itself).
func TestConfigEmptyRulesDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("rules: [\"\", \" \"]\n"), 0o644)
	if _, err := LoadConfigFile(p); err == nil || !strings.Contains(err.Error(), "rules: entry 1 is empty") {
		t.Errorf("err %v", err)
	}
}
