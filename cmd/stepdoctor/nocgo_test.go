//go:build !cgo

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCgoBuild: a build without cgo has no Python parser. lint says so
// (exit 2); analyze, facts, diff and rules work, and rules test skips the
// script cases. CI runs it with CGO_ENABLED=0 go test -run NoCgo.
func TestNoCgoBuild(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata")
	trace := filepath.Join(dir, "traces", "healthy.pt.trace.json")
	if code, _, stderr := runCLI(t, "lint", filepath.Join(dir, "scripts", "mnist.py")); code != 2 || !strings.Contains(stderr, "built without the Python parser") {
		t.Errorf("lint: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", "--script", filepath.Join(dir, "scripts", "mnist.py"), trace); code != 2 || !strings.Contains(stderr, "built without the Python parser") {
		t.Errorf("analyze --script: exit %d %s", code, stderr)
	}
	for _, args := range [][]string{{"analyze", trace}, {"facts", trace}, {"diff", trace, trace}, {"rules", "list"}} {
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "rules", "test")
	if code != 0 || !strings.Contains(stdout, "SKIP: builtin/cases/blocking-copy.yaml") || strings.Contains(stdout, "FAIL") {
		t.Errorf("rules test: exit %d %s\n%s", code, stderr, stdout)
	}
}
