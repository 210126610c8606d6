package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/rules"
)

// FuzzFactsFile merges two facts files (as from stepdoctor facts, one per
// rank job) the way analyze does: read and range-check every line, assign
// ranks, derive the cross-rank facts and evaluate the built-in rules. A
// file may be refused with an error; nothing may panic.
//
//	go test ./engine -run '^$' -fuzz FuzzFactsFile -fuzztime 30s -fuzzminimizetime=0
//
// Seeds: testdata/fuzz/FuzzFactsFile (lines of the sample traces, two
// ranks, damaged numbers).
func FuzzFactsFile(f *testing.F) {
	f.Add([]byte(`{"schema_version":1}`), []byte("\n"))
	set, err := rules.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	if set, err = set.With(rules.Config{Timeout: 200 * time.Millisecond}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		dir := t.TempDir()
		pa, pb := filepath.Join(dir, "rank0.jsonl"), filepath.Join(dir, "rank1.jsonl")
		if os.WriteFile(pa, a, 0o644) != nil || os.WriteFile(pb, b, 0o644) != nil {
			t.Skip("cannot write inputs")
		}
		res, err := Analyze(context.Background(), Options{Paths: []string{pa, pb}, Rules: set})
		if err != nil {
			return
		}
		for _, tr := range res.Traces {
			if tr.Facts == nil {
				t.Fatalf("%s: no facts", tr.Input.Path)
			}
			for _, fd := range tr.Findings {
				if fd.Impact < 0 || fd.Impact > 1 || fd.Impact != fd.Impact {
					t.Errorf("%s: rule %s impact %v out of 0..1", tr.Input.Path, fd.Rule, fd.Impact)
				}
			}
		}
	})
}
