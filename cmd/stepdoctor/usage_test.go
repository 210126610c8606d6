package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/engine"
)

// TestHelpHasNoBoolNoise: no help text shows pflag's "[=true|false]".
func TestHelpHasNoBoolNoise(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"analyze", "--help"}, {"facts", "--help"}, {"lint", "--help"}, {"diff", "--help"}, {"rules", "list", "--help"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || strings.Contains(out, "[=true|false]") || !strings.Contains(out, "--help ") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
}

// TestTextReportFile: -o report.txt writes the text format, every message
// whole (no "…": cutting is for terminals); -q leaves stderr empty.
func TestTextReportFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.txt")
	code, _, errOut := runCLI(t, "analyze", "-q", "--script", "../../testdata/scripts/every_mistake.py", "-o", out, sampleTrace)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q: want 0 and nothing on stderr with -q", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "dataloader-bound") || strings.Contains(string(b), "…") || strings.Contains(string(b), "\x1b[") {
		t.Errorf("text report:\n%s", b)
	}
	long := 0
	for _, l := range strings.Split(string(b), "\n") {
		long = max(long, len(l))
	}
	if long <= 200 {
		t.Errorf("longest line %d: the joined messages should be whole, over 200 characters", long)
	}
}

// TestProgressBar: nothing before the delay; then one line with percent,
// sizes and rate, redrawn at most every 100 ms; -v lines clear it first;
// done clears it.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progressBar{w: &b, start: time.Now(), delay: time.Hour, tty: true}
	p.update(1<<20, 4<<20)
	p.done()
	if b.Len() != 0 {
		t.Fatalf("progress before the delay: %q", b.String())
	}
	p = &progressBar{w: &b, start: time.Now().Add(-3 * time.Second), delay: progressDelay, tty: true}
	p.update(1<<20, 4<<20)
	p.update(2<<20, 4<<20) // within 100 ms: not drawn
	if got := b.String(); !strings.Contains(got, "reading traces:  25% (1/4 MB, ") || !strings.Contains(got, " MB/s)") || strings.Count(got, "reading") != 1 {
		t.Errorf("progress %q", got)
	}
	b.Reset()
	p.loaded(engine.FileTiming{Path: "rank0.json", Bytes: 50e6, Read: 2 * time.Second, Derive: 300 * time.Millisecond})
	if got := b.String(); got != "\r\x1b[Kread rank0.json: read 2s (50.0 MB, 25 MB/s), facts 300ms\n" {
		t.Errorf("timing line %q", got)
	}
	b.Reset()
	p.update(4<<20, 4<<20)
	p.done()
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Errorf("done did not clear the line: %q", b.String())
	}
}

// TestVerboseTimings: -v prints one timing line per input even when
// stderr is not a terminal, and no progress line there.
func TestVerboseTimings(t *testing.T) {
	code, _, errOut := runCLI(t, "analyze", "-v", "-o", filepath.Join(t.TempDir(), "r.json"), "../../testdata/traces")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "\nread ") + map[bool]int{true: 1}[strings.HasPrefix(errOut, "read ")]; n != 3 || strings.Contains(errOut, "reading traces") {
		t.Errorf("stderr %q: want 3 timing lines and no progress", errOut)
	}
}

// TestQuietVerboseExclusive: -q and -v say opposite things; together they
// are a usage error, not one silently winning.
func TestQuietVerboseExclusive(t *testing.T) {
	for _, cmd := range []string{"analyze", "diff"} {
		code, _, errOut := runCLI(t, cmd, "-q", "-v", "../../testdata/traces/healthy.pt.trace.json", "../../testdata/traces/healthy.pt.trace.json")
		if code != 2 || !strings.Contains(errOut, "quiet") {
			t.Errorf("%s -q -v: exit %d, %q; want 2 naming the flags", cmd, code, errOut)
		}
	}
}

// TestRulesListAligned: with a team rule whose id is longer than any
// built-in one, every row's severity, category and title still start in
// the same columns.
func TestRulesListAligned(t *testing.T) {
	dir := t.TempDir()
	rule := strings.Replace(mustRead(t, "../../rules/examples/idle_budget.yaml"), "id: team-idle-budget", "id: team-gpu-idle-budget-for-the-nightly-training-benchmark", 1)
	if err := os.WriteFile(filepath.Join(dir, "long.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "rules", "list", "--rules", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	col := -1
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("row %q", l)
		}
		// The severity column starts after the id and its padding.
		at := strings.Index(l[len(f[0]):], f[1]) + len(f[0])
		if col < 0 {
			col = at
		}
		if at != col {
			t.Errorf("row %q: severity at column %d, want %d", l, at, col)
		}
	}
	if !strings.Contains(out, "team-gpu-idle-budget-for-the-nightly-training-benchmark  low") {
		t.Errorf("long id row missing or not padded:\n%s", out)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStepMarkerWarnings: a --step-marker that marks no step says so.
func TestStepMarkerWarnings(t *testing.T) {
	code, _, stderr := runCLI(t, "analyze", "--step-marker", "^nomatch$", "../../testdata/traces/healthy.pt.trace.json")
	if code != 0 || !strings.Contains(stderr, "--step-marker ^nomatch$ is not used: the trace has ProfilerStep#N spans") {
		t.Errorf("ProfilerStep trace: exit %d, stderr %q", code, stderr)
	}
	if _, _, stderr := runCLI(t, "analyze", "--step-marker", "auto", "../../testdata/traces/healthy.pt.trace.json"); strings.Contains(stderr, "step-marker") {
		t.Errorf("auto on a ProfilerStep trace warns: %q", stderr)
	}
}

// TestRulesUnknownSubcommand: a typo in the subcommand is a usage error.
func TestRulesUnknownSubcommand(t *testing.T) {
	if code, _, stderr := runCLI(t, "rules", "bogus"); code != 2 || !strings.Contains(stderr, `unknown rules subcommand "bogus"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
