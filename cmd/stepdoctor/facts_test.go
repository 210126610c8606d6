package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
)

// TestFactsSharedTraces runs `stepdoctor facts` on every shared trace and
// compares each line with REFERENCE.json.
func TestFactsSharedTraces(t *testing.T) {
	dir := factstest.SharedTraces(t)
	ref, names := factstest.Reference(t, dir)
	var paths []string
	for _, n := range names {
		if !factstest.Rejected(ref[n]) {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	code, stdout, stderr := runCLI(t, append([]string{"facts"}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("%d lines for %d traces", len(lines), len(paths))
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		name, _ := filepath.Rel(dir, got["file"].(string))
		t.Run(name, func(t *testing.T) {
			if got["file"] != paths[i] || got["schema_version"] != float64(facts.SchemaVersion) || got["health"] == nil {
				t.Errorf("file %v schema_version %v health %v", got["file"], got["schema_version"], got["health"] != nil)
			}
			for _, d := range facts.Catalogue {
				if _, ok := got[d.Name]; !ok {
					t.Errorf("fact %s missing from the line", d.Name)
				}
			}
			factstest.Compare(t, ref[name], got)
		})
	}
}

func TestFactsList(t *testing.T) {
	code, stdout, _ := runCLI(t, "facts", "--list")
	if code != 0 || !strings.Contains(stdout, "gpu_idle_ratio") || strings.Count(stdout, "\n") != len(facts.Catalogue)+1 {
		t.Fatalf("exit %d, %d lines", code, strings.Count(stdout, "\n"))
	}
	if code, _, _ := runCLI(t, "facts"); code != 2 {
		t.Errorf("facts without paths: exit %d, want 2", code)
	}
}

// TestMergeFromFacts reduces each DLRM rank to facts in a separate run,
// merges the facts files in one analyze, and expects the very report the
// traces give.
func TestMergeFromFacts(t *testing.T) {
	dir := filepath.Join(factstest.SharedTraces(t), "param", "dlrm_kineto")
	code, want, stderr := runCLI(t, "analyze", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("analyze traces: exit %d: %s", code, stderr)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	tmp := t.TempDir()
	var shards []string
	for i, tr := range traces {
		code, out, stderr := runCLI(t, "facts", tr)
		if code != 0 {
			t.Fatalf("facts %s: exit %d: %s", tr, code, stderr)
		}
		shard := filepath.Join(tmp, "rank"+string(rune('0'+i))+".jsonl")
		if err := os.WriteFile(shard, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, shard)
	}
	code, got, stderr := runCLI(t, append([]string{"analyze", "--format", "json"}, shards...)...)
	if code != 0 {
		t.Fatalf("analyze facts: exit %d: %s", code, stderr)
	}
	// The reports differ only in the command line that made them.
	got, want = dropCommand(got), dropCommand(want)
	if got != want {
		t.Errorf("report from facts files differs from the report from traces (%d vs %d bytes)", len(got), len(want))
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("first difference at line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
				break
			}
		}
	}
	if !strings.Contains(want, `"rank_count": 8`) {
		t.Errorf("cross-rank facts missing from the 8-rank report")
	}
}

// dropCommand removes the "command" line of a JSON report.
func dropCommand(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), `"command": `) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
