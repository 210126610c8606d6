package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/internal/sariftest"
)

var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	checkSARIFOutputs(t, args, code, out.Bytes())
	return code, out.String(), errb.String()
}

// checkSARIFOutputs validates every SARIF log a CLI test writes (stdout with
// --format sarif, or an -o/--output file ending in .sarif) against the SARIF
// schemas (internal/sariftest).
func checkSARIFOutputs(t *testing.T, args []string, code int, stdout []byte) {
	t.Helper()
	if code == 2 { // usage or input error: no report
		return
	}
	for i, a := range args {
		switch {
		case (a == "--format" || a == "-f") && i+1 < len(args) && args[i+1] == "sarif", a == "--format=sarif":
			if err := sariftest.Validate(t, stdout); err != nil {
				t.Errorf("%v: stdout: %v", args, err)
			}
		case (a == "-o" || a == "--output") && i+1 < len(args) && strings.HasSuffix(args[i+1], ".sarif"):
			if b, err := os.ReadFile(args[i+1]); err == nil {
				if err := sariftest.Validate(t, b); err != nil {
					t.Errorf("%v: %s: %v", args, args[i+1], err)
				}
			}
		}
	}
}

// TestAnalyzeSharedTraces runs analyze on every shared trace: JSON facts
// must match REFERENCE.json, Markdown and HTML reports must be written, and
// a file that is not a Kineto trace must exit 2 with an error naming it.
func TestAnalyzeSharedTraces(t *testing.T) {
	dir := factstest.SharedTraces(t)
	ref, names := factstest.Reference(t, dir)
	out := t.TempDir()
	for i, name := range names {
		want := ref[name]
		path := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "analyze", "--format", "json", path)
			if factstest.Rejected(want) {
				if code != 2 || !strings.Contains(stderr, "not a Kineto trace") || !strings.Contains(stderr, name) {
					t.Fatalf("exit %d, stderr %q: want 2 and a not-a-Kineto-trace error naming the file", code, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				Traces []struct {
					Facts    map[string]any `json:"facts"`
					Findings []traceFinding `json:"findings"`
				} `json:"traces"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Traces) != 1 {
				t.Fatalf("decode JSON report: %v (%d traces)", err, len(doc.Traces))
			}
			factstest.Compare(t, want, doc.Traces[0].Facts)
			// Impacts within the window, idle claims within the idle time,
			// severity following the rank: on every shared trace.
			checkInvariants(t, name, doc.Traces[0].Facts, doc.Traces[0].Findings)
			for _, ext := range []string{".md", ".html"} {
				dst := filepath.Join(out, filepath.Base(filepath.Dir(name))+"-"+string(rune('a'+i))+ext)
				if code, _, stderr := runCLI(t, "analyze", "-o", dst, path); code != 0 {
					t.Fatalf("analyze -o %s: exit %d: %s", dst, code, stderr)
				}
				b, err := os.ReadFile(dst)
				if err != nil || len(b) == 0 {
					t.Fatalf("report %s: %v (%d bytes)", dst, err, len(b))
				}
				if ext == ".html" && len(b) > 1<<20 {
					t.Errorf("HTML report is %d bytes, over 1 MB", len(b))
				}
			}
		})
	}
}

// The findings MANIFEST.md leads one to expect.
func TestExpectedFindings(t *testing.T) {
	dir := factstest.SharedTraces(t)
	for name, rules := range map[string][]string{
		"kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz":    {"dataloader-bound", "pageable-memcpy"},
		"hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz":               {"launch-bound", "profile-too-short"},
		"hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz": {"pageable-memcpy", "profile-too-short"},
		"hta/negative_queue_length_values_check/rank0.json.gz":                        {"host-sync-in-step"},
	} {
		code, stdout, stderr := runCLI(t, "analyze", "--format", "json", filepath.Join(dir, name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for _, r := range rules {
			if !strings.Contains(stdout, `"rule": "`+r+`"`) {
				t.Errorf("%s: expected finding %s", name, r)
			}
		}
	}
	// num_workers=4 fixed the input pipeline: no dataloader-bound.
	_, stdout, _ := runCLI(t, "analyze", "--format", "json", filepath.Join(dir, "kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.pt.trace.json.gz"))
	if strings.Contains(stdout, `"rule": "dataloader-bound"`) {
		t.Errorf("num_workers=4 trace must not be dataloader-bound")
	}
}

func TestExitCodes(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "traces", "dataloader_bound.pt.trace.json")
	healthy := filepath.Join("..", "..", "testdata", "traces", "healthy.pt.trace.json")
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"analyze", sample}, 0, ""},
		{[]string{"analyze", "--fail-on", "high", sample}, 1, "dataloader-bound"},
		{[]string{"analyze", "--fail-on", "low", healthy}, 0, ""},
		{[]string{"analyze", "--fail-on", "urgent", sample}, 2, "--fail-on"},
		{[]string{"analyze", "--format", "pdf", sample}, 2, "format"},
		{[]string{"analyze", "-o", "report.pdf", sample}, 2, "report.pdf"},
		{[]string{"analyze", "no/such/trace.json"}, 2, "no/such/trace.json"},
		{[]string{"analyze"}, 2, "analyze: missing PATH (a trace file"},
		{[]string{"diff", sample}, 2, "diff: missing AFTER"},
		{[]string{"lint"}, 2, "lint: missing FILE|DIR"},
		{[]string{"frobnicate"}, 2, ""},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d stderr %q, want exit %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

func TestStdinAndDirectory(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "traces", "healthy.pt.trace.json")
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"analyze", "--format", "md", "-"}, bytes.NewReader(data), &out, &errb); code != 0 {
		t.Fatalf("stdin: exit %d: %s", code, errb.String())
	}
	code, stdout, stderr := runCLI(t, "analyze", "--format", "json", filepath.Join("..", "..", "testdata", "traces"))
	if code != 0 || strings.Count(stdout, `"path": `) != 3 {
		t.Fatalf("directory: exit %d: %s", code, stderr)
	}
}

func TestDiffAndBaseline(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "traces")
	slow, fast := filepath.Join(dir, "dataloader_bound.pt.trace.json"), filepath.Join(dir, "healthy.pt.trace.json")
	code, stdout, stderr := runCLI(t, "diff", slow, fast)
	if code != 0 || !strings.Contains(stdout, "2.75x faster") || !strings.Contains(stdout, "resolved  dataloader-bound") {
		t.Fatalf("diff: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range []string{"md", "html", "json"} {
		if code, out, stderr := runCLI(t, "diff", "--format", f, slow, fast); code != 0 || len(out) == 0 {
			t.Errorf("diff --format %s: exit %d %s", f, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "diff", "-", "-"); code != 2 || !strings.Contains(stderr, "can be read once") {
		t.Errorf("diff - -: exit %d %s, want 2", code, stderr)
	}
	// Current run slower than the baseline by 175%: exit 3 (a regression,
	// not a finding) naming the median step time.
	code, stdout, stderr = runCLI(t, "analyze", "--baseline", fast, "--max-regression", "10%", slow)
	if code != 3 || !strings.Contains(stderr, "step_time_us.p50 regressed 175.1%") || !strings.Contains(stdout, "5 → 5 steps") {
		t.Errorf("regression: exit %d %s", code, stderr)
	}
	// Every report carries the comparison (a CI comment shows why the job
	// exited 3); with -o, stderr has the verdict too.
	dirOut := t.TempDir()
	for format, want := range map[string][]string{
		"md":   {"## Baseline", "1 regression(s) over the 10% bound", "**Regression:** step\\_time\\_us.p50 regressed 175.1%"},
		"html": {"<h2>Baseline</h2>", "<strong>Regression:</strong> step_time_us.p50 regressed 175.1%"},
		"json": {`"baseline": {`, `"regressions": [`, `"max_regression": 0.1`},
		"txt":  {"Compared with the baseline", "regression step_time_us.p50 regressed 175.1%"},
	} {
		report := filepath.Join(dirOut, "r."+format)
		code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "-o", report, slow)
		body, _ := os.ReadFile(report)
		for _, w := range want {
			if code != 3 || !strings.Contains(string(body), w) {
				t.Errorf("-o r.%s: exit %d, report lacks %q", format, code, w)
			}
		}
		if !strings.Contains(stderr, "5 → 5 steps") {
			t.Errorf("-o r.%s: no verdict on stderr: %s", format, stderr)
		}
	}
	// Ranks of the baseline with no counterpart are named, not gated.
	ranks := t.TempDir()
	for _, side := range []string{"old", "new"} {
		os.Mkdir(filepath.Join(ranks, side), 0o755)
	}
	healthy, err := os.ReadFile(fast)
	if err != nil {
		t.Fatal(err)
	}
	for i, side := range []string{"old", "old", "new"} {
		name := filepath.Join(ranks, side, fmt.Sprintf("rank%d.pt.trace.json", i%2))
		if err := os.WriteFile(name, healthy, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rankReport := filepath.Join(ranks, "r.md")
	if code, _, stderr := runCLI(t, "analyze", "--baseline", filepath.Join(ranks, "old"), "-o", rankReport, filepath.Join(ranks, "new")); code != 0 {
		t.Errorf("unpaired baseline rank: exit %d %s, want 0", code, stderr)
	}
	if body, _ := os.ReadFile(rankReport); !strings.Contains(string(body), "**Not compared:** 1 trace(s) had no trace of the same rank on the other side and were not compared: baseline: ") {
		t.Errorf("unpaired baseline rank not named in the report:\n%.1500s", body)
	}
	// diff with no rank in common compares nothing: an input error.
	for _, side := range []struct {
		dir   string
		ranks []int
	}{{"a", []int{0, 1}}, {"b", []int{5, 6}}} {
		os.Mkdir(filepath.Join(ranks, side.dir), 0o755)
		for _, r := range side.ranks {
			var doc map[string]any
			if err := json.Unmarshal(healthy, &doc); err != nil {
				t.Fatal(err)
			}
			doc["distributedInfo"] = map[string]any{"backend": "nccl", "rank": r, "world_size": 8}
			b, _ := json.Marshal(doc)
			os.WriteFile(filepath.Join(ranks, side.dir, fmt.Sprintf("rank%d.pt.trace.json", r)), b, 0o644)
		}
	}
	if code, _, stderr := runCLI(t, "diff", filepath.Join(ranks, "a"), filepath.Join(ranks, "b")); code != 2 || !strings.Contains(stderr, "no trace pairs up") {
		t.Errorf("diff without a common rank: exit %d %s, want 2", code, stderr)
	}

	if _, out, _ := runCLI(t, "analyze", "--format", "json", slow); strings.Contains(out, `"baseline"`) {
		t.Errorf("a report without --baseline has a baseline")
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", slow, "--max-regression", "10%", fast); code != 0 {
		t.Errorf("improvement: exit %d %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "analyze", "--baseline", fast, "--max-regression", "200%", slow); code != 0 {
		t.Errorf("175%% is within a 200%% bound: exit %d", code)
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "--regression-fact", "gpu_idle_ratio", "--max-regression", "5%", slow); code != 3 || !strings.Contains(stderr, "gpu_idle_ratio") {
		t.Errorf("fact regression: exit %d %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "analyze", "--baseline", fast, "--regression-fact", "nope", slow); code != 2 {
		t.Errorf("unknown fact: exit %d", code)
	}
	// A stats fact is not a leaf: it once passed the check and gated
	// nothing. The error lists the leaves; a leaf gates.
	for _, bad := range []string{"step_time_us", "has_gpu", "kernel_launches_per_ms"} {
		if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "--regression-fact", bad, slow); code != 2 || !strings.Contains(stderr, "step_time_us.p90") {
			t.Errorf("--regression-fact %s: exit %d %s", bad, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", slow, "--regression-fact", "step_time_us.p90", "--max-regression", "10%", slow); code != 0 {
		t.Errorf("step_time_us.p90 against itself: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "--regression-fact", "step_time_us.p90", "--max-regression", "10%", slow); code != 3 || !strings.Contains(stderr, "step_time_us.p90 regressed") {
		t.Errorf("step_time_us.p90 regression: exit %d %s", code, stderr)
	}
	// NaN compares false with every slowdown: accepted, it passed them all.
	for _, bad := range []string{"ten", "NaN", "nan%", "Inf%"} {
		if code, _, _ := runCLI(t, "analyze", "--baseline", fast, "--max-regression", bad, slow); code != 2 {
			t.Errorf("bad bound %s: exit %d, want 2", bad, code)
		}
	}
	// A baseline that cannot be read or compared, or a --regression-fact
	// refused, is an input error before any report: no file is left, and
	// nothing reaches stdout. A regression still writes the report.
	out := t.TempDir()
	notTrace := filepath.Join(out, "notjson.json")
	os.WriteFile(notTrace, []byte("hello not json\n"), 0o644)
	for _, args := range [][]string{
		{"--baseline", notTrace},
		{"--baseline", filepath.Join(out, "missing.json")},
		{"--baseline", fast, "--regression-fact", "nope"},
		{"--baseline", fast, "--regression-fact", "schema_version"},
	} {
		report := filepath.Join(out, "r.md")
		if code, _, _ := runCLI(t, append(append([]string{"analyze", "-o", report}, args...), slow)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if _, err := os.Stat(report); err == nil {
			t.Errorf("%v: a report was written", args)
		}
		if code, stdout, _ := runCLI(t, append(append([]string{"analyze"}, args...), slow)...); code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %.200q", args, code, stdout)
		}
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", "-", "-"); code != 2 || !strings.Contains(stderr, "can be read once") {
		t.Errorf("--baseline - -: exit %d %s, want 2", code, stderr)
	}
	// A baseline without steps is named as the side without them.
	var doc map[string]any
	rawFast, err := os.ReadFile(fast)
	if err != nil || json.Unmarshal(rawFast, &doc) != nil {
		t.Fatal("read", fast, err)
	}
	var kept []any
	for _, e := range doc["traceEvents"].([]any) {
		if name, _ := e.(map[string]any)["name"].(string); !strings.HasPrefix(name, "ProfilerStep#") {
			kept = append(kept, e)
		}
	}
	doc["traceEvents"] = kept
	noSteps := filepath.Join(out, "nosteps.json")
	b, _ := json.Marshal(doc)
	os.WriteFile(noSteps, b, 0o644)
	if code, _, stderr := runCLI(t, "analyze", "--baseline", noSteps, slow); code != 2 || !strings.Contains(stderr, "no step time in "+noSteps+" (no ProfilerStep spans)") {
		t.Errorf("stepless baseline: exit %d %s, want 2 naming %s alone", code, stderr, noSteps)
	}
	// A cut baseline is compared, with a warning that it was repaired.
	raw, err := os.ReadFile(slow)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(out, "cut.json")
	os.WriteFile(cut, raw[:len(raw)/3], 0o644)
	if _, _, stderr := runCLI(t, "analyze", "--baseline", cut, fast); !strings.Contains(stderr, "warning: the baseline "+cut+" was repaired (truncated") {
		t.Errorf("cut baseline: no repair warning: %s", stderr)
	}
	report := filepath.Join(out, "reg.md")
	if code, _, _ := runCLI(t, "analyze", "-o", report, "--baseline", fast, slow); code != 3 {
		t.Errorf("regression with -o: exit %d, want 3", code)
	}
	if _, err := os.Stat(report); err != nil {
		t.Errorf("regression with -o: no report: %v", err)
	}
}

// TestRegressionExitCodes: a regression exits 3 and a finding at or above
// --fail-on exits 1, so CI can tell them apart; the regression wins when
// both happen. Every name --regression-fact lists is accepted.
func TestRegressionExitCodes(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "traces")
	slow, fast := filepath.Join(dir, "dataloader_bound.pt.trace.json"), filepath.Join(dir, "healthy.pt.trace.json")
	if code, _, stderr := runCLI(t, "analyze", "--baseline", slow, "--fail-on", "high", slow); code != 1 {
		t.Errorf("finding without regression: exit %d %s, want 1", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "--fail-on", "high", slow); code != 3 {
		t.Errorf("regression and finding: exit %d %s, want 3", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, slow); code != 3 || !strings.Contains(stderr, "regression over 10%") {
		t.Errorf("regression at the default bound: exit %d %s, want 3", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", "--baseline", fast, "--max-regression", "0.1", slow); code != 3 || !strings.Contains(stderr, "regression over 10%") {
		t.Errorf("a bound given as a fraction: exit %d %s, want 3 and the bound as 10%%", code, stderr)
	}
	args := []string{"analyze", "--baseline", slow}
	for _, leaf := range facts.RegressionLeaves() {
		args = append(args, "--regression-fact", leaf)
	}
	if code, _, stderr := runCLI(t, append(args, slow)...); code != 0 {
		t.Errorf("every listed --regression-fact against itself: exit %d %s", code, stderr)
	}
	if code, out, stderr := runCLI(t, "analyze", "--help"); code != 0 || !strings.Contains(out+stderr, "3 a regression over --max-regression") {
		t.Errorf("help does not document exit 3: exit %d %s%s", code, out, stderr)
	}
}

func TestBaselineUsage(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "traces")
	slow, fast := filepath.Join(dir, "dataloader_bound.pt.trace.json"), filepath.Join(dir, "healthy.pt.trace.json")
	for _, args := range [][]string{
		{"analyze", "--baseline", fast, "--max-regression", "10", slow}, // ambiguous: 10 what?
		{"analyze", "--max-regression", "10%", slow},                    // no baseline
		{"analyze", "--regression-fact", "gpu_idle_ratio", slow},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
	if code, _, _ := runCLI(t, "analyze", "--baseline", fast, "--max-regression", "0.1", slow); code != 3 {
		t.Errorf("a fraction bound: exit %d, want 3", code)
	}
	// A baseline without steps cannot gate step time.
	nosteps := filepath.Join(t.TempDir(), "nosteps.json")
	os.WriteFile(nosteps, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o644)
	if code, _, stderr := runCLI(t, "analyze", "--baseline", nosteps, slow); code != 2 || !strings.Contains(stderr, "cannot be compared") {
		t.Errorf("baseline without steps: exit %d %s", code, stderr)
	}
}
