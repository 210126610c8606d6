//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runCLITimeout runs the CLI but fails the test instead of hanging when a
// read blocks (a FIFO opened for reading waits for a writer forever).
func runCLITimeout(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runCLI(t, args...)
		done <- result{code, out, errs}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("%v: still running after 20 s (blocked on a FIFO?)", args)
	}
	return 0, "", ""
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
}

// TestScanSkipsFIFO: a named pipe with a trace, script or rule file name in
// a scanned directory is skipped and listed; it used to block the run
// forever.
func TestScanSkipsFIFO(t *testing.T) {
	d := t.TempDir()
	copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "log", "rank0.json"))
	mkfifo(t, filepath.Join(d, "log", "rank1.json"))
	code, _, stderr := runCLITimeout(t, "analyze", "-o", filepath.Join(d, "r.json"), filepath.Join(d, "log"))
	if code != 0 || !strings.Contains(stderr, "rank1.json") || !strings.Contains(stderr, "named pipe") {
		t.Errorf("analyze: exit %d, stderr %q; want 0 and the FIFO listed as skipped", code, stderr)
	}

	os.MkdirAll(filepath.Join(d, "src"), 0o755)
	os.WriteFile(filepath.Join(d, "src", "train.py"), []byte("import torch\n"), 0o644)
	mkfifo(t, filepath.Join(d, "src", "pipe.py"))
	code, _, stderr = runCLITimeout(t, "lint", filepath.Join(d, "src"))
	if code != 0 || !strings.Contains(stderr, "pipe.py") || !strings.Contains(stderr, "named pipe") {
		t.Errorf("lint: exit %d, stderr %q; want 0 and the FIFO listed as skipped", code, stderr)
	}

	os.MkdirAll(filepath.Join(d, "team", "cases"), 0o755)
	mkfifo(t, filepath.Join(d, "team", "rule.yaml"))
	mkfifo(t, filepath.Join(d, "team", "cases", "c.yaml"))
	mkfifo(t, filepath.Join(d, "team", "x.rego"))
	os.WriteFile(filepath.Join(d, "team", "x_test.rego"), []byte("package t\n\nimport rego.v1\n\ntest_ok if { true }\n"), 0o644)
	code, _, stderr = runCLITimeout(t, "rules", "list", "--rules", filepath.Join(d, "team"))
	if code != 0 || !strings.Contains(stderr, "rule.yaml") || !strings.Contains(stderr, "named pipe") {
		t.Errorf("rules list: exit %d, stderr %q; want 0 and the FIFO listed as skipped", code, stderr)
	}
	if code, out, stderr := runCLITimeout(t, "rules", "test", filepath.Join(d, "team")); code != 0 || !strings.Contains(out, "test_ok") ||
		!strings.Contains(out, "SKIP: "+filepath.Join(d, "team", "cases", "c.yaml")+": not read: not a regular file: a named pipe") {
		t.Errorf("rules test: exit %d, %s %s; want 0, the Rego test run and the case file FIFO named", code, out, stderr)
	}
}

// TestScanSkipsUnreadableDir: an unreadable subdirectory of a trace or
// script directory is skipped and listed; it used to abort the run. Root
// reads every directory, so the test needs another user.
func TestScanSkipsUnreadableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: every directory is readable")
	}
	d := t.TempDir()
	copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "log", "rank0.json"))
	locked := filepath.Join(d, "log", "locked")
	os.Mkdir(locked, 0o755)
	os.WriteFile(filepath.Join(d, "log", "train.py"), []byte("import torch\n"), 0o644)
	if err := os.Chmod(locked, 0); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	code, _, stderr := runCLI(t, "analyze", "-o", filepath.Join(d, "r.json"), filepath.Join(d, "log"))
	if code != 0 || !strings.Contains(stderr, "locked") {
		t.Errorf("analyze: exit %d, stderr %q; want 0 and the directory listed as skipped", code, stderr)
	}
	code, _, stderr = runCLI(t, "lint", filepath.Join(d, "log"))
	if code != 0 || !strings.Contains(stderr, "locked") {
		t.Errorf("lint: exit %d, stderr %q; want 0 and the directory listed as skipped", code, stderr)
	}
}
