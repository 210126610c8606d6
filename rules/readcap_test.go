package rules

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// big is a YAML comment of more than MaxFileSize bytes after body.
func big(body string) string { return body + "#" + strings.Repeat("x", MaxFileSize) + "\n" }

// TestOversizedFilesAreRefused: config, rule and case files over
// MaxFileSize are refused with an error naming the file, and reading
// /dev/zero as the config stops at the cap.
func TestOversizedFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(cfg, []byte(big("disable: []\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfigFile(cfg); err == nil || !strings.Contains(err.Error(), "read config "+cfg) || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("big config: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := LoadConfigFile("/dev/zero")
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "read config /dev/zero") || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("/dev/zero config: %v", err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("/dev/zero config allocated %d MiB", grew>>20)
		}
	}
	rules := writeRules(t, map[string]string{"a.yaml": big(goodExpr)})
	if _, err := Load(rules); err == nil || !strings.Contains(err.Error(), "read rule file a.yaml") || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big rule file: %v", err)
	}
	rules = writeRules(t, map[string]string{"a.yaml": goodExpr, "r.rego": big(regoRule("team-x", "\tf := {\"msg\": \"x\", \"impact\": 0}"))})
	if _, err := Load(rules); err == nil || !strings.Contains(err.Error(), "r.rego") || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big rego file: %v", err)
	}
	rules = writeRules(t, map[string]string{"a.yaml": goodExpr})
	if err := os.MkdirAll(filepath.Join(rules, "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "cases", "c.yaml"), []byte(big("rule: team-many-memcpy\ncases: []\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(rules)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunCases(s, filepath.Join(rules, "cases")); err == nil || !strings.Contains(err.Error(), "read case file") || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big case file: %v", err)
	}
}
