package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// reviewVerdict is one line of a hand review of lint findings
// (testdata/lint_review/*.tsv): "file:line:column<TAB>rule<TAB>verdict<TAB>
// shape" and, optionally, "<TAB>reason". verdict is keep (a finding worth
// reporting), worthless (true but not worth a reviewer's time), wrong (its
// claim is false) or missed (wanted, not reported; rule "none" when no
// script rule covers the cause).
type reviewVerdict struct {
	verdict, shape, reason string
}

// readReview reads a review file into "rel/path.py:line rule" keys (the
// column is dropped: findings are matched by line). When one line has
// several findings of a rule, one kept is enough.
func readReview(t *testing.T, path string) map[string]reviewVerdict {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	review := map[string]reviewVerdict{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 4 && len(parts) != 5 {
			t.Fatalf("%s: review line %q: want 4 or 5 tab-separated fields", path, line)
		}
		v := reviewVerdict{verdict: parts[2], shape: parts[3]}
		if len(parts) == 5 {
			v.reason = parts[4]
		}
		if !slices.Contains([]string{"keep", "worthless", "wrong", "missed"}, v.verdict) {
			t.Fatalf("%s: review line %q: verdict %q is not keep, worthless, wrong or missed", path, line, v.verdict)
		}
		i := strings.LastIndex(parts[0], ":")
		if i < 0 {
			t.Fatalf("%s: review line %q: want file:line:column", path, line)
		}
		key := parts[0][:i] + " " + parts[1]
		if old, ok := review[key]; ok && old.verdict == "keep" {
			continue
		}
		review[key] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return review
}

// reportedKeys lints dir and returns, per script finding, "rel:line rule"
// in finding order, plus the set of keys reported at their line or named
// in a loop's finding (foldedLines).
func reportedKeys(t *testing.T, dir string) (findings []string, messages map[string]string, got map[string]bool) {
	t.Helper()
	res, err := Lint(context.Background(), LintOptions{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	messages, got = map[string]string{}, map[string]bool{}
	for _, sr := range res.Scripts {
		rel, _ := filepath.Rel(dir, sr.Path)
		rel = filepath.ToSlash(rel)
		for _, w := range foldedLines(sr.Findings) {
			n, rule, _ := strings.Cut(w, " ")
			got[fmt.Sprintf("%s:%s %s", rel, n, rule)] = true
		}
		for _, fd := range sr.Findings {
			key := fmt.Sprintf("%s:%d %s", rel, fd.Location.Line, fd.Rule)
			got[key] = true
			findings = append(findings, key)
			messages[key] = fd.Message
		}
	}
	return findings, messages, got
}

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
	review := readReview(t, "../testdata/lint_review/shared_scripts.tsv")
	// Shapes judged worthless that the rules still report, knowingly.
	open := map[string]bool{
		"tiny-model-library":  true, // learn2learn's OmniglotFC: a library class, size unknown
		"loop-syncs-generate": true, "eval-gathers-predictions": true, "replay-buffer": true,
		// Small models built in ways lint does not size: nn.Linear
		// subclasses, nn.LSTM, graph layers of nn.Parameter matrices,
		// remote modules under a DistributedOptimizer.
		"small-model-unread": true,
	}
	findings, messages, got := reportedKeys(t, dir)
	kept := 0
	for _, key := range findings {
		v, ok := review[key]
		switch {
		case !ok:
			t.Errorf("%s: new finding, not in the review: %s", key, messages[key])
		case v.verdict == "keep":
			kept++
		case v.verdict == "wrong":
			t.Errorf("%s: finding judged wrong (%s) is back: %s", key, v.shape, messages[key])
		case !open[v.shape]:
			t.Errorf("%s: finding judged worthless (%s) is back: %s", key, v.shape, messages[key])
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
	if len(findings) == 0 {
		t.Fatal("no findings on the shared scripts")
	}
	t.Logf("precision on shared scripts: %d kept / %d reported = %.1f%%", kept, len(findings), 100*float64(kept)/float64(len(findings)))
}

// Thresholds of TestLintReviewScripts: today's scores, floored. The
// review records lint's known false positives (worthless, wrong) and
// misses anyway, so the scores show the gap; raise these as rules are
// fixed (every finding reviewed wrong or worthless gone and every miss
// found gives 1.0 and 1.0).
const (
	reviewMinPrecision = 0.60 // kept / reported; 28 / 45 = 0.622 at the review
	reviewMinRecall    = 0.60 // wanted and reported / wanted, rules lint has; 28 / 46 = 0.609
)

// TestLintReviewScripts scores lint on testdata/scripts/review, training and
// inference scripts in the shapes people write (HF Trainer, accelerate,
// nanoGPT-style, timm-style DDP, Lightning, torchrun, FSDP, a generation
// server, PPO, diffusion, torchvision-reference helpers in sibling modules,
// a notebook export, guarded logging, a tuned script) against the hand
// review in testdata/lint_review/review_scripts.tsv. Every finding must be
// in the review; precision (kept / reported) and recall (wanted findings
// reported, at their line or named in their loop's finding, / all wanted,
// missed ones included) must stay at or above the thresholds, and a kept
// finding must not disappear. Findings reviewed wrong or worthless are
// logged, not failed: they are the known gap.
func TestLintReviewScripts(t *testing.T) {
	const dir = "../testdata/scripts/review"
	review := readReview(t, "../testdata/lint_review/review_scripts.tsv")
	for key := range review {
		loc, _, _ := strings.Cut(key, " ")
		file, line, _ := strings.Cut(loc, ":")
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("review entry %s: %v", key, err)
		}
		if n, err := strconv.Atoi(line); err != nil || n < 1 || n > strings.Count(string(b), "\n") {
			t.Fatalf("review entry %s: line %q is not in %s", key, line, file)
		}
	}
	findings, messages, got := reportedKeys(t, dir)
	kept, fps := 0, map[string]int{}
	for _, key := range findings {
		v, ok := review[key]
		switch {
		case !ok:
			t.Errorf("%s: new finding, not in the review: %s", key, messages[key])
		case v.verdict == "keep":
			kept++
		case v.verdict == "missed":
			kept++
			t.Logf("%s: reviewed as missed, now reported: %s", key, messages[key])
		default:
			fps[v.verdict]++
			t.Logf("false positive (%s, %s): %s: %s", v.verdict, v.shape, key, v.reason)
		}
	}
	if len(findings) == 0 {
		t.Fatal("no findings on the review scripts")
	}
	wanted, found, outOfScope, lost := 0, 0, 0, 0
	keys := make([]string, 0, len(review))
	for key := range review {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		v := review[key]
		if v.verdict != "keep" && v.verdict != "missed" {
			continue
		}
		if strings.HasSuffix(key, " none") {
			outOfScope++
			t.Logf("missed, no script rule for it (%s): %s: %s", v.shape, key, v.reason)
			continue
		}
		wanted++
		switch {
		case got[key]:
			found++
		case v.verdict == "keep":
			lost++
			t.Errorf("kept finding no longer reported: %s", key)
		default:
			t.Logf("missed (%s): %s: %s", v.shape, key, v.reason)
		}
	}
	precision := float64(kept) / float64(len(findings))
	recall := float64(found) / float64(wanted)
	t.Logf("review scripts: %d reported, %d kept, %d worthless, %d wrong: precision %.1f%%", len(findings), kept, fps["worthless"], fps["wrong"], 100*precision)
	t.Logf("review scripts: %d of %d wanted findings reported: recall %.1f%% (%.1f%% counting %d wanted findings no script rule covers)",
		found, wanted, 100*recall, 100*float64(found)/float64(wanted+outOfScope), outOfScope)
	if precision < reviewMinPrecision {
		t.Errorf("precision %.3f below %.2f", precision, reviewMinPrecision)
	}
	if recall < reviewMinRecall {
		t.Errorf("recall %.3f below %.2f", recall, reviewMinRecall)
	}
}
