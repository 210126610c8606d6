package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintSharedReview re-lints ../shared/scripts (real training scripts of
// other projects) and checks the hand review in
// testdata/lint_review/shared_scripts.tsv: a finding judged wrong must not
// come back, nor one judged worthless for a shape that is fixed; one judged
// worth keeping must still be reported at its line or named in its loop's
// finding. It logs the precision: kept / reported.
func TestLintSharedReview(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "scripts")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared scripts absent (%v): real-code review skipped", err)
	}
	type verdict struct{ verdict, shape string }
	review := map[string]verdict{} // "rel/path.py:line rule"
	f, err := os.Open("../testdata/lint_review/shared_scripts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 4 {
			t.Fatalf("review line %q: want 4 tab-separated fields", line)
		}
		loc := parts[0][:strings.LastIndex(parts[0], ":")] // drop the column
		key := loc + " " + parts[1]
		if old, ok := review[key]; ok && old.verdict == "keep" {
			continue // one finding kept at that line is enough
		}
		review[key] = verdict{parts[2], parts[3]}
	}
	res, err := Lint(context.Background(), LintOptions{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	// Shapes judged worthless that the rules still report, knowingly.
	open := map[string]bool{
		"tiny-model-library":  true, // learn2learn's OmniglotFC: a library class, size unknown
		"loop-syncs-generate": true, "eval-gathers-predictions": true, "replay-buffer": true,
	}
	got := map[string]bool{}
	kept, total := 0, 0
	for _, sr := range res.Scripts {
		rel, _ := filepath.Rel(dir, sr.Path)
		folded := foldedLines(sr.Findings)
		for _, w := range folded {
			n, rule, _ := strings.Cut(w, " ")
			got[fmt.Sprintf("%s:%s %s", filepath.ToSlash(rel), n, rule)] = true
		}
		for _, fd := range sr.Findings {
			key := fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), fd.Location.Line, fd.Rule)
			got[key] = true
			total++
			v, ok := review[key]
			switch {
			case !ok:
				t.Errorf("%s: new finding, not in the review: %s", key, fd.Message)
			case v.verdict == "keep":
				kept++
			case v.verdict == "wrong":
				t.Errorf("%s: finding judged wrong (%s) is back: %s", key, v.shape, fd.Message)
			case !open[v.shape]:
				t.Errorf("%s: finding judged worthless (%s) is back: %s", key, v.shape, fd.Message)
			}
		}
	}
	lost := 0
	for key, v := range review {
		if v.verdict == "keep" && !got[key] {
			lost++
			t.Logf("kept finding no longer reported: %s", key)
		}
	}
	if lost > 0 {
		t.Errorf("%d findings judged worth keeping are gone", lost)
	}
	if total == 0 {
		t.Fatal("no findings on the shared scripts")
	}
	t.Logf("precision on shared scripts: %d kept / %d reported = %.1f%%", kept, total, 100*float64(kept)/float64(total))
}
