package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
)

// TestInferenceTracesReport: on the shared vLLM, SGLang and B200/H100
// inference traces the report has a role breakdown (per phase where the
// serving engine names its iterations) and every rule left not evaluated
// says why in terms an inference user can act on: never to add an
// optimizer, a training loop's prof.step() when the engine's iteration
// spans are there, or other ranks of a single-rank job. With
// --step-marker auto the per-step rules run, so only the rules that truly
// cannot run on these traces remain.
func TestInferenceTracesReport(t *testing.T) {
	dir := factstest.SharedTraces(t)
	cases := []struct {
		path  string
		phase string // the phase the breakdown shows; "" for a trace without iteration spans
	}{
		{"tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", "decode"},
		{"tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", "decode"},
		{"tracelens/tests/traces/b200/eager_trace.json.gz", "prefill"},
		{"tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", ""},
	}
	// Reasons that are no action for an inference user.
	bad := []string{"profile training steps", "call optimizer.step()", "call prof.step() every iteration"}
	// What may stay not evaluated with --step-marker auto: the training,
	// multi-rank and memory rules, and one-iteration step statistics.
	canNot := map[string]bool{
		"dataloader-bound": true, "optimizer-foreach": true, "optimizer-zero-grad": true, "small-batch": true,
		"rank-imbalance": true, "straggler-rank": true, "exposed-communication": true, "slow-collective-bandwidth": true,
		"memory-growth": true, "memory-headroom": true, "memory-near-capacity": true, "memory-fragmentation": true,
	}
	type report struct {
		Traces []struct {
			Facts        map[string]any `json:"facts"`
			NotEvaluated []struct {
				Rule string `json:"rule"`
				Hint string `json:"hint"`
			} `json:"not_evaluated"`
		} `json:"traces"`
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			path := filepath.Join(dir, c.path)
			for _, marker := range []string{"", "auto"} {
				args := []string{"analyze", "--format", "json"}
				if marker != "" {
					args = append(args, "--step-marker", marker)
				}
				code, stdout, stderr := runCLI(t, append(args, path)...)
				if code != 0 {
					t.Fatalf("marker %q: exit %d: %s", marker, code, stderr)
				}
				var doc report
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Traces) != 1 {
					t.Fatalf("marker %q: decode: %v", marker, err)
				}
				tr := doc.Traces[0]
				if tr.Facts["step_kernel_ratio"] == nil {
					t.Errorf("marker %q: no role breakdown (step_kernel_ratio null)", marker)
				}
				for _, ne := range tr.NotEvaluated {
					if ne.Hint == "" {
						t.Errorf("marker %q: %s not evaluated without a reason", marker, ne.Rule)
					}
					for _, b := range bad {
						if strings.Contains(ne.Hint, b) && (c.phase != "" || !strings.Contains(b, "prof.step")) {
							t.Errorf("marker %q: %s: reason %q says %q", marker, ne.Rule, ne.Hint, b)
						}
					}
					if marker == "auto" && c.phase != "" && !canNot[ne.Rule] && ne.Rule != "step-time-variance" {
						t.Errorf("marker auto: %s still not evaluated: %s", ne.Rule, ne.Hint)
					}
				}
			}
			code, md, stderr := runCLI(t, "analyze", "--format", "md", path)
			if code != 0 {
				t.Fatalf("md: exit %d: %s", code, stderr)
			}
			if c.phase != "" && (!strings.Contains(md, "Time by role per inference phase") || !strings.Contains(md, "| "+c.phase+" | 1 |")) {
				t.Errorf("markdown report has no %s row in the phase breakdown", c.phase)
			}
		})
	}
}
