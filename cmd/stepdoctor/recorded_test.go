package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recordedCase is what a performance engineer reads in one trace of
// testdata/recorded (real torch.profiler output of Debian's CPU PyTorch
// 1.13.1, each script with one known mistake; testdata/recorded/README.md
// says how each was made and what the trace shows).
type recordedCase struct {
	name  string
	input string // file or directory under testdata/recorded
	trace string // the trace of a directory input to check (its path ends so); "" for a file
	// first is the rule the first finding must have; "" when the trace
	// must have no finding at medium or above.
	first    string
	severity string // the first finding's severity, when it matters
	// allowed are the other rules that may be medium or above: readings of
	// the same culprit. Any other finding must stay low or info.
	allowed []string
	absent  []string // rules that must not appear at all, at any severity
	skip    string   // why stepdoctor does not read this trace right yet
}

var recordedCases = []recordedCase{
	{name: "healthy", input: "healthy.pt.trace.json.gz"},
	{name: "dataloader_workers0", input: "dataloader_workers0.pt.trace.json.gz", first: "dataloader-bound", severity: "high"},
	// On CPU .item() copies a float already in host memory: not a sync.
	{name: "item_per_step", input: "item_per_step.pt.trace.json.gz", absent: []string{"host-sync-in-step", "idle-gap-sync"}},
	{name: "unfused_elementwise", input: "unfused_elementwise.pt.trace.json.gz", first: "repeated-small-op", allowed: []string{"elementwise-fusion"}},
	// Grad mode leaves no trace on CPU: nothing to say, and no training advice.
	{name: "inference_grad", input: "inference_grad.pt.trace.json.gz", absent: []string{"small-batch", "optimizer-zero-grad", "optimizer-foreach"}},
	{name: "zero_grad_fill", input: "zero_grad_fill.pt.trace.json.gz", first: "optimizer-zero-grad"},
	{name: "small_batch", input: "small_batch.pt.trace.json.gz", first: "small-batch", severity: "high"},
	{name: "gloo_allreduce/rank1", input: "gloo_allreduce", trace: "rank1.pt.trace.json.gz", first: "cpu-collectives"},
	{name: "gloo_allreduce/rank0", input: "gloo_allreduce", trace: "rank0.pt.trace.json.gz"},
	// Adam(foreach=False) on CPU: Optimizer.step#Adam.step is 40% of the
	// step. Both readings name the optimizer: a larger batch amortises the
	// step, foreach=True removes its per-parameter dispatch (small-batch says
	// to do that first); the elementwise chains and the repeated aten::add_
	// run inside the optimizer step and are not claimed again.
	{name: "optimizer_no_foreach", input: "optimizer_no_foreach.pt.trace.json.gz", first: "small-batch",
		allowed: []string{"optimizer-foreach"}, absent: []string{"elementwise-fusion", "repeated-small-op"}},
}

// TestRecordedTraces analyzes each recorded trace and checks the first
// finding and that no other reading reaches medium.
func TestRecordedTraces(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "recorded")
	for _, c := range recordedCases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			tr := analyzeRecorded(t, filepath.Join(dir, c.input), c.trace)
			checkInvariants(t, c.name, tr.Facts, tr.Findings)
			var strong []traceFinding
			for _, f := range tr.Findings {
				if slices.Contains(c.absent, f.Rule) {
					t.Errorf("%s fired: %s", f.Rule, f.Message)
				}
				if f.Severity == "high" || f.Severity == "medium" {
					strong = append(strong, f)
				}
			}
			if c.first == "" {
				for _, f := range strong {
					t.Errorf("want no finding at medium or above, got %s %s: %s", f.Severity, f.Rule, f.Message)
				}
				return
			}
			if len(tr.Findings) == 0 || tr.Findings[0].Rule != c.first {
				t.Fatalf("first finding %v, want %s", ruleIDs(tr.Findings), c.first)
			}
			if c.severity != "" && tr.Findings[0].Severity != c.severity {
				t.Errorf("%s is %s, want %s", c.first, tr.Findings[0].Severity, c.severity)
			}
			for _, f := range strong {
				if f.Rule != c.first && !slices.Contains(c.allowed, f.Rule) {
					t.Errorf("%s is %s, want below medium: %s", f.Rule, f.Severity, f.Message)
				}
			}
		})
	}
}

// TestRecordedCrossRank: the two gloo ranks' all-reduces, aligned by
// order, show rank 0 arriving last at 12 of the 18 (steps 2 and 3, where
// rank 1's gloo:all_reduce spans wait up to 367 ms for it).
func TestRecordedCrossRank(t *testing.T) {
	tr := analyzeRecorded(t, filepath.Join("..", "..", "testdata", "recorded", "gloo_allreduce"), "rank0.pt.trace.json.gz")
	if r, _ := tr.Facts["rank_last_arrival_ratio"].(float64); r < 0.5 {
		t.Errorf("rank 0 rank_last_arrival_ratio %v, want at least 0.5", tr.Facts["rank_last_arrival_ratio"])
	}
	if !slices.Contains(ruleIDs(tr.Findings), "straggler-rank") {
		t.Errorf("rank 0 findings %v, want straggler-rank", ruleIDs(tr.Findings))
	}
}

// TestRecordedLegacyFormat: PyTorch built without Kineto (Debian's
// python3-torch; torch.autograd.kineto_available() is False) writes the
// legacy autograd-profiler JSON whatever the profiler options: a bare
// array, pid "CPU functions", no args, so no shapes, stacks or memory.
func TestRecordedLegacyFormat(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "recorded", "healthy.pt.trace.json.gz")
	code, stdout, stderr := runCLI(t, "analyze", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(strings.ToLower(stdout), "kineto") {
		t.Errorf("report does not say the trace is a legacy (non-Kineto) export:\n%s", stdout)
	}
}

type recordedTrace struct {
	Input struct {
		Path string `json:"path"`
	} `json:"input"`
	Facts    map[string]any `json:"facts"`
	Findings []traceFinding `json:"findings"`
}

// analyzeRecorded runs analyze --format json on path and returns the trace
// whose path ends in suffix (the only one when suffix is "").
func analyzeRecorded(t *testing.T, path, suffix string) recordedTrace {
	t.Helper()
	code, stdout, stderr := runCLI(t, "analyze", "--format", "json", path)
	if code != 0 {
		t.Fatalf("analyze %s: exit %d: %s", path, code, stderr)
	}
	var doc struct {
		Traces []recordedTrace `json:"traces"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("decode JSON report of %s: %v", path, err)
	}
	for _, tr := range doc.Traces {
		if suffix == "" && len(doc.Traces) == 1 || suffix != "" && strings.HasSuffix(tr.Input.Path, suffix) {
			return tr
		}
	}
	t.Fatalf("%s: no trace %q among %d", path, suffix, len(doc.Traces))
	return recordedTrace{}
}

func ruleIDs(fs []traceFinding) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.Rule
	}
	return ids
}
