package reports

import (
	"io"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/rules"
)

func twoRanks() *engine.Result {
	mk := func(rank int64, step, compute, rel float64, straggler bool) *engine.TraceResult {
		n := int64(2)
		return &engine.TraceResult{
			Input: engine.Input{Path: "rank<" + string(rune('0'+rank)) + ">.json"}, Rank: &rank, RankSource: engine.RankFromFileName,
			Facts: &facts.Facts{SchemaVersion: facts.SchemaVersion, StepsCount: 2, WindowUS: 2 * step, HasSteps: true,
				StepTimeUS: &facts.StepStats{Mean: step}, RankCount: &n, ComputeKernelTimeRatio: f64(compute),
				RankComputeOverMedian: f64(rel), RankStepTimeOverMedian: f64(1), RankLastArrivalRatio: f64(map[bool]float64{true: 1}[straggler]),
				RankStraggler: &straggler},
		}
	}
	return &engine.Result{SchemaVersion: engine.ResultSchemaVersion, Traces: []*engine.TraceResult{mk(0, 10000, 0.4, 0.8, false), mk(1, 10000, 0.6, 1.2, true)}}
}

func TestRankTable(t *testing.T) {
	r := twoRanks()
	md := string(render(t, Markdown, r))
	for _, want := range []string{"### Ranks (2, identity from file name)", "| 1 ⚠ straggler |", "**6.00 ms (1.20× median)**", "| 0 | 10.00 ms |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	h := string(render(t, HTML, r))
	if !strings.Contains(h, `<tr class="straggler">`) || !strings.Contains(h, "identity from file name") || strings.Contains(h, "rank<0>") {
		t.Error("HTML rank table missing, or a path unescaped")
	}
	txt := string(render(t, func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }, r))
	if !strings.Contains(txt, "<- straggler") {
		t.Errorf("text lacks the straggler mark:\n%s", txt)
	}
	// One trace: no rank table.
	one := &engine.Result{SchemaVersion: 1, Traces: r.Traces[:1]}
	one.Traces[0].Facts.RankCount = nil
	if strings.Contains(string(render(t, Markdown, one)), "### Ranks") {
		t.Error("rank table for a single trace")
	}
}

// TestManyTracesHTMLCollapsed: with several traces each trace is a
// collapsed <details> section that the rank table links to, and a rule doc
// shared by the ranks' findings is printed once, linked from each finding.
func TestManyTracesHTMLCollapsed(t *testing.T) {
	r := twoRanks()
	doc := "The GPU waits for the **slowest** rank.\n"
	for _, tr := range r.Traces {
		tr.Findings = append(tr.Findings, rules.Finding{Rule: "rank-imbalance", Title: "Ranks do unequal work", Severity: rules.SeverityMedium, Impact: 0.1, Confidence: rules.Likely, Doc: doc})
	}
	h := string(render(t, HTML, r))
	if n := strings.Count(h, `<details class="trace-fold" id="trace-`); n != 2 || strings.Contains(h, `<details class="trace-fold" id="trace-1" open`) {
		t.Errorf("%d collapsed trace sections, want 2, closed", n)
	}
	if !strings.Contains(h, `<a href="#trace-2">1</a>`) {
		t.Error("rank table does not link to the trace sections")
	}
	if n := strings.Count(h, "<strong>slowest</strong>"); n != 1 {
		t.Errorf("rule doc printed %d times, want once", n)
	}
	if n := strings.Count(h, `<a href="#rule-doc-rank-imbalance">`); n != 2 || !strings.Contains(h, `<article class="rule-doc" id="rule-doc-rank-imbalance">`) {
		t.Errorf("%d links to the doc, want 2", n)
	}
	// One trace: no folding, the doc stays with its finding.
	one := &engine.Result{SchemaVersion: 1, Traces: r.Traces[:1]}
	h1 := string(render(t, HTML, one))
	if strings.Contains(h1, `class="trace-fold"`) || strings.Contains(h1, "rule-doc-") || !strings.Contains(h1, "<strong>slowest</strong>") {
		t.Error("single trace report folded or lost its doc")
	}
}
