package reports

import (
	"fmt"
	"html"
	"io"
	"regexp"
	"slices"
	"strconv"
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
	for _, want := range []string{"### Ranks (2, identity from file name)", "| 1 ⚠ straggler |", "| 6.00 ms (1.20× median) |", "| 0 | 10.00 ms |",
		// Two ranks 20% apart are both 10% from their median: neither is marked.
		"Most ranks are 10% or more from the median in compute (2 of 2 ranks)"} {
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

// manyRanks builds n ranks: rank n-1 is the straggler, rank 3 computes
// 30% over the median, the rest sit at the median; every rank has the
// finding exposed-communication.
func manyRanksResult(n int) *engine.Result {
	r := &engine.Result{SchemaVersion: engine.ResultSchemaVersion}
	count := int64(n)
	for i := 0; i < n; i++ {
		rank := int64(i)
		straggler := i == n-1
		rel := 1.0
		if i == 3 {
			rel = 1.3
		}
		r.Traces = append(r.Traces, &engine.TraceResult{
			Input: engine.Input{Path: "rank" + strconv.Itoa(i) + ".json"}, Rank: &rank, RankSource: engine.RankFromDistributedInfo,
			Facts: &facts.Facts{SchemaVersion: facts.SchemaVersion, StepsCount: 2, WindowUS: 20000, HasSteps: true,
				StepTimeUS: &facts.StepStats{Mean: 10000 + float64(i%5)}, RankCount: &count, ComputeKernelTimeRatio: f64(0.4 * rel),
				RankComputeOverMedian: f64(rel), RankStepTimeOverMedian: f64(1), RankLastArrivalRatio: f64(map[bool]float64{true: 1}[straggler]),
				RankStraggler: &straggler},
			Findings: []rules.Finding{{Rule: "exposed-communication", Title: "Communication not hidden behind compute", Severity: rules.SeverityHigh, Impact: 0.3, Confidence: rules.Confirmed}},
		})
	}
	return r
}

// TestManyRanksShowOutliers: above manyRanks ranks every report shows the
// straggler, the outlier ranks and the median rank, counts the rest and
// sums up their findings; the JSON report keeps every rank.
func TestManyRanksShowOutliers(t *testing.T) {
	r := manyRanksResult(200)
	md := string(render(t, Markdown, r))
	rows := regexp.MustCompile(`(?m)^\| \d+[^|]* \| \d`).FindAllString(md, -1)
	if len(rows) != 3 {
		t.Errorf("Markdown rank table rows %q: want the straggler, rank 3 and the median rank", rows)
	}
	for _, want := range []string{"### Ranks (200,", "| 199 ⚠ straggler |", "| 3 |", "(median)", "197 more ranks are within 10% of the median", "Communication not hidden behind compute on 197", "200 traces analysed; the 3 ranks below are shown in full."} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if n := strings.Count(md, "\n## Trace "); n != 3 {
		t.Errorf("Markdown has %d trace sections, want 3", n)
	}
	h := string(render(t, HTML, r))
	if n := strings.Count(h, `<details class="trace-fold"`); n != 3 || !strings.Contains(h, "197 more ranks") || !strings.Contains(h, "Ranks (200,") {
		t.Errorf("HTML: %d rank sections (want 3), or no count of the rest", n)
	}
	txt := string(render(t, func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }, r))
	if !strings.Contains(txt, "200 ranks") || !strings.Contains(txt, "197 more ranks") || strings.Count(txt, "rank150.json") != 0 {
		t.Errorf("text report does not focus on the outliers:\n%s", txt)
	}
	js := string(render(t, JSON, r))
	if !strings.Contains(js, "rank150.json") {
		t.Error("the JSON report lost a rank")
	}
	// Up to manyRanks ranks, every rank is shown.
	small := string(render(t, Markdown, manyRanksResult(manyRanks)))
	if strings.Contains(small, "more ranks") || strings.Count(small, "\n## Trace ") != manyRanks {
		t.Errorf("%d ranks: want every rank shown", manyRanks)
	}
}

// TestBaselineViewManyPairs: above manyRanks pairs only the flagged ones
// are listed, in rank order, and the rest counted; at or below it every
// pair is listed.
func TestBaselineViewManyPairs(t *testing.T) {
	mk := func(n int, flagged ...int) *engine.Result {
		b := &engine.Baseline{Path: "old", MaxRegression: 0.1}
		for i := n - 1; i >= 0; i-- { // out of rank order
			r := int64(i)
			p := engine.BaselinePair{Baseline: fmt.Sprintf("old/%d", i), Trace: fmt.Sprintf("new/%d", i), Rank: &r}
			if slices.Contains(flagged, i) {
				p.Regressions = []string{"step_time_us.p50 regressed 20.0%"}
			}
			b.Pairs = append(b.Pairs, p)
		}
		return &engine.Result{Baseline: b}
	}
	v := buildBaseline(mk(40, 29, 3, 17))
	var titles []string
	for _, p := range v.Pairs {
		titles = append(titles, p.Title)
	}
	want := []string{"rank 3: new/3 against old/3", "rank 17: new/17 against old/17", "rank 29: new/29 against old/29"}
	if !slices.Equal(titles, want) || v.Hidden != 37 || !strings.HasPrefix(v.HiddenLine, "37 more pair(s) not listed") || !v.Regressed {
		t.Errorf("40 pairs: %q, hidden %d %q", titles, v.Hidden, v.HiddenLine)
	}
	if v := buildBaseline(mk(manyRanks)); len(v.Pairs) != manyRanks || v.Hidden != 0 || v.Regressed {
		t.Errorf("%d pairs: %d listed, %d hidden", manyRanks, len(v.Pairs), v.Hidden)
	}
	if buildBaseline(&engine.Result{}) != nil {
		t.Error("a view without --baseline")
	}
}

// TestStragglerHeadline: with a straggler the rank table is followed by
// the job's headline, naming the straggler and the median wait for it, in
// text, Markdown and HTML; it names no finding as the cause (the delay may
// come from before the window).
func TestStragglerHeadline(t *testing.T) {
	r := twoRanks()
	st := r.Traces[1]
	st.Facts.RanksCollectiveWaitRatio = f64(0.347)
	st.Findings = []rules.Finding{
		{Rule: "straggler-rank", Title: "One rank makes the others wait at every collective"},
		{Rule: "launch-bound", Title: "GPU waits on kernel launches", Impact: 0.389},
	}
	want := "Rank 1 paces the job: it starts 100.0% of the collectives last, and the ranks wait a median 34.7% of step time for the last arrival. " +
		"What delays rank 1 (its findings, or work before the window: a late step start, a slow batch) sets the job's pace; " +
		"on the other ranks, a saving smaller than their wait only lengthens the wait until rank 1 gets faster."
	txt := string(render(t, func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }, r))
	md := string(render(t, Markdown, r))
	h := string(render(t, HTML, r))
	if !strings.Contains(txt, want) {
		t.Errorf("text lacks the straggler headline %q:\n%s", want, txt)
	}
	if !strings.Contains(md, want) {
		t.Errorf("Markdown lacks the straggler headline %q:\n%s", want, md)
	}
	if hw := `<p class="straggler">` + html.EscapeString(want) + `</p>`; !strings.Contains(h, hw) {
		t.Errorf("HTML lacks %q", hw)
	}
	// --annotate refuses several traces: the report suggests it for one
	// rank's trace alone, never for the run it came from.
	if strings.Contains(h, "run with <code>--annotate") || !strings.Contains(h, "trace alone with <code>--annotate out.json</code>") {
		t.Error("a report of several ranks suggests --annotate for the whole run, or not per rank")
	}
	st.Facts.RanksCollectiveWaitRatio = nil
	if md := string(render(t, Markdown, r)); strings.Contains(md, "paces the job") {
		t.Error("a straggler headline without the measured wait")
	}
}

// A column where most ranks are outliers marks none and says why; a lone
// outlier is still marked.
func TestMarkBoldSpread(t *testing.T) {
	rows := make([]rankRow, 8)
	for i := range rows {
		rows[i].StepOut = true // two groups of ranks: every mean step is off the median
	}
	rows[3].CommOut = true
	line := markBold(rows)
	for i, r := range rows {
		if r.StepBold {
			t.Errorf("rank %d: mean step marked bold in a column where every rank is an outlier", i)
		}
		if r.CommBold != (i == 3) {
			t.Errorf("rank %d: communication bold %v, want %v", i, r.CommBold, i == 3)
		}
	}
	want := "Most ranks are 10% or more from the median in mean step (8 of 8 ranks): the ranks differ too widely for one to be typical, so that column marks none."
	if line != want {
		t.Errorf("markBold line:\n got %q\nwant %q", line, want)
	}
	rows[3].CommOut = false
	for i := range rows {
		rows[i].StepOut = i == 0
	}
	if line := markBold(rows); line != "" || !rows[0].StepBold {
		t.Errorf("one outlier: line %q, rank 0 bold %v; want no line and rank 0 bold", line, rows[0].StepBold)
	}
}
