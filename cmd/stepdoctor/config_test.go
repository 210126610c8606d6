//go:build cgo

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// TestEverySubcommandReadsConfig: analyze, facts, diff and lint read the
// same .stepdoctor.yaml (found in the current directory, or --config),
// and its facts: section sets fact thresholds over the defaults.
func TestEverySubcommandReadsConfig(t *testing.T) {
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	trace := filepath.Join(repo, "testdata", "traces", "launch_bound.pt.trace.json")
	script := filepath.Join(repo, "testdata", "scripts", "every_mistake.py")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	os.WriteFile(cfg, []byte("disable: [cudnn-benchmark-off, launch-bound]\nfacts:\n  short_kernel_ns: 1\n"), 0o644)

	if code, out, stderr := runCLI(t, "lint", script); code != 0 || !strings.Contains(out, "cudnn-benchmark-off") {
		t.Fatalf("lint without config: exit %d %s", code, stderr)
	}
	if code, out, stderr := runCLI(t, "lint", "--config", cfg, script); code != 0 || strings.Contains(out, "cudnn-benchmark-off") || out == "" {
		t.Errorf("lint --config: exit %d %s\n%s", code, stderr, out)
	}
	code, out, stderr := runCLI(t, "diff", "--format", "json", "--config", cfg, trace, trace)
	if code != 0 || strings.Contains(out, `"rule": "launch-bound"`) {
		t.Errorf("diff --config: exit %d %s\n%s", code, stderr, out)
	}
	if code, out, _ := runCLI(t, "diff", "--format", "json", trace, trace); code != 0 || !strings.Contains(out, `"rule": "launch-bound"`) {
		t.Errorf("diff without config lost launch-bound:\n%s", out)
	}
	// facts: short_kernel_ns 1 leaves no kernel short; the other thresholds
	// keep their defaults (elementwise chains are still found).
	shortRatio := func(args ...string) (float64, float64) {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"facts"}, args...)...)
		if code != 0 {
			t.Fatalf("facts %v: exit %d %s", args, code, stderr)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		r, _ := m["short_kernel_ratio"].(float64)
		c, _ := m["elementwise_chain_count"].(float64)
		return r, c
	}
	defShort, defChains := shortRatio(trace)
	short, chains := shortRatio("--config", cfg, trace)
	if defShort == 0 || short != 0 || chains != defChains {
		t.Errorf("short_kernel_ratio %v -> %v, chains %v -> %v", defShort, short, defChains, chains)
	}
	// Found in the current directory by every subcommand.
	os.WriteFile(filepath.Join(dir, ".stepdoctor.yaml"), []byte("facts:\n  examples: 0\n"), 0o644)
	t.Chdir(dir)
	for _, args := range [][]string{{"analyze", trace}, {"facts", trace}, {"diff", trace, trace}, {"lint", script}, {"rules", "list"}} {
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, "examples: want a positive number") {
			t.Errorf("%v with a bad ./.stepdoctor.yaml: exit %d %s", args, code, stderr)
		}
	}
}

// TestStepMarkerFlag: --step-marker reaches the facts of analyze and facts
// (auto marks the SGLang-style spans of a project-made trace), the yaml key
// does the same, and an invalid expression is a usage error (exit 2).
func TestStepMarkerFlag(t *testing.T) {
	dir := t.TempDir()
	b := tracetest.New()
	for k, s := range []float64{0, 200, 400} {
		b.X("user_annotation", "step[DECODE bs=8]", s, 100)
		b.Launch(s+10, 5, fmt.Sprintf("k%d", k), s+20, 50)
	}
	tr := filepath.Join(dir, "serve.json")
	if err := os.WriteFile(tr, b.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"facts", "--step-marker", "auto", tr}, {"facts", "--step-marker", `^step\[`, tr}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, `"steps_count":3`) {
			t.Errorf("%v: exit %d, stderr %s, steps_count not 3 in %.200s", args, code, errOut, out)
		}
	}
	code, out, _ := runCLI(t, "facts", tr)
	if code != 0 || !strings.Contains(out, `"steps_count":0`) || !strings.Contains(out, `"engine":"sglang"`) {
		t.Errorf("default: exit %d, want no steps and the marker found: %.300s", code, out)
	}
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("facts: {step_marker: auto}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "facts", "--config", cfg, tr); code != 0 || !strings.Contains(out, `"steps_count":3`) {
		t.Errorf("yaml step_marker: exit %d", code)
	}
	if code, _, errOut := runCLI(t, "analyze", "--step-marker", "step[(", tr); code != 2 || !strings.Contains(errOut, "--step-marker") {
		t.Errorf("invalid --step-marker: exit %d, stderr %q", code, errOut)
	}
	if err := os.WriteFile(cfg, []byte("facts: {step_marker: \"(\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runCLI(t, "facts", "--config", cfg, tr); code != 2 {
		t.Errorf("invalid yaml step_marker: exit %d, want 2", code)
	}
}
