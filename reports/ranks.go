package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Per-rank table: one row per rank when several ranks were analyzed
// together, with the cross-rank facts and the outliers marked.

// outlierBand marks a value this far from the median (10%) as an outlier.
const outlierBand = 0.10

// rankRow is one rank of the per-rank table. Cells are formatted; the
// *Out flags mark outliers.
type rankRow struct {
	Index               int // position in Result.Traces
	Rank                string
	Source              string
	Path                string
	StepMean            string
	StepOut             bool
	Busy                string
	Compute, Comm       string // per step, "× median"
	ComputeOut, CommOut bool
	// The *Bold flags are the *Out flags a report marks: none in a column
	// where most ranks are outliers (rankFocus.Spread).
	StepBold, ComputeBold, CommBold bool
	Exposed, LastArrival            string
	Straggler                       bool
	Findings                        int
	// Typical marks the median rank, shown beside the outliers of a large
	// job; dev is the largest distance from the median (0..), for ordering.
	Typical bool
	dev     float64
}

// Large jobs: above manyRanks ranks the reports (text, Markdown, HTML)
// show the outlier ranks, at most maxShownRanks by distance from the
// median with the straggler first, and the median rank; the others are
// counted, and their findings summed up by rule. The JSON report keeps
// every rank.
const (
	manyRanks     = 16
	maxShownRanks = 12
)

// rankFocus is what a report shows of the ranks.
type rankFocus struct {
	Rows []rankRow // the rank table's rows, in rank order
	// Hidden is the count of ranks left out; HiddenFindings their findings
	// by rule, most ranks first.
	Hidden         int
	HiddenFindings []hiddenFinding
	// Straggler is the job's headline when one rank paces the others
	// (stragglerLine), else "".
	Straggler string
	// Spread says which columns have most ranks 10% or more from the
	// median, so that no rank there is typical and none is marked bold
	// (spreadLine), else "".
	Spread string
	show   map[int]bool // Result.Traces indexes shown; nil: all
}

// hiddenFinding is one rule that fired on ranks left out of a report.
type hiddenFinding struct {
	Rule, Title string
	Ranks       int
}

// Shows reports whether the trace at index i gets its section.
func (f rankFocus) Shows(i int) bool { return f.show == nil || f.show[i] }

// HiddenLine says what was left out, or "" when nothing was.
func (f rankFocus) HiddenLine() string {
	if f.Hidden == 0 {
		return ""
	}
	s := fmt.Sprintf("%d more ranks are within %.0f%% of the median on every column and are not the straggler; the JSON report has every rank.", f.Hidden, 100*outlierBand)
	if len(f.HiddenFindings) > 0 {
		var parts []string
		for _, h := range f.HiddenFindings {
			parts = append(parts, fmt.Sprintf("%s on %d", h.Title, h.Ranks))
		}
		s += " Their findings: " + strings.Join(parts, ", ") + "."
	}
	return s
}

// focusRanks picks the ranks a report shows (all of them up to
// manyRanks).
func focusRanks(r *engine.Result, rows []rankRow) rankFocus {
	spread := markBold(rows)
	if len(rows) <= manyRanks {
		return rankFocus{Rows: rows, Straggler: stragglerLine(r, rows), Spread: spread}
	}
	order := make([]int, 0, len(rows))
	for i, row := range rows {
		if row.Straggler || row.StepOut || row.ComputeOut || row.CommOut {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := rows[order[a]], rows[order[b]]
		if ra.Straggler != rb.Straggler {
			return ra.Straggler
		}
		return ra.dev > rb.dev
	})
	order = order[:min(len(order), maxShownRanks)]
	// The median rank by mean step time, as the typical one.
	byStep := make([]int, len(rows))
	for i := range byStep {
		byStep[i] = i
	}
	step := func(i int) float64 {
		if f := r.Traces[rows[i].Index].Facts; f != nil && f.StepTimeUS != nil {
			return f.StepTimeUS.Mean
		}
		return 0
	}
	sort.SliceStable(byStep, func(a, b int) bool { return step(byStep[a]) < step(byStep[b]) })
	med := byStep[(len(byStep)-1)/2]
	picked := map[int]bool{}
	for _, i := range order {
		picked[i] = true
	}
	picked[med] = true
	foc := rankFocus{show: map[int]bool{}, Straggler: stragglerLine(r, rows), Spread: spread}
	hidden := map[string]*hiddenFinding{}
	for i, row := range rows {
		if !picked[i] {
			foc.Hidden++
			seen := map[string]bool{}
			for _, fd := range r.Traces[row.Index].Findings {
				if seen[fd.Rule] {
					continue
				}
				seen[fd.Rule] = true
				h := hidden[fd.Rule]
				if h == nil {
					h = &hiddenFinding{Rule: fd.Rule, Title: fd.Title}
					hidden[fd.Rule] = h
				}
				h.Ranks++
			}
			continue
		}
		row.Typical = i == med
		foc.Rows = append(foc.Rows, row)
		foc.show[row.Index] = true
	}
	for _, h := range hidden {
		foc.HiddenFindings = append(foc.HiddenFindings, *h)
	}
	sort.Slice(foc.HiddenFindings, func(a, b int) bool {
		x, y := foc.HiddenFindings[a], foc.HiddenFindings[b]
		if x.Ranks != y.Ranks {
			return x.Ranks > y.Ranks
		}
		return x.Rule < y.Rule
	})
	return foc
}

// markBold sets the rows' *Bold flags from their *Out flags, except in a
// column where more than half the ranks are outliers: there the ranks
// spread too widely for the median to be a typical rank (two ranks, or
// ranks in two groups), and marking most of the column says nothing. It
// returns the sentence that says so, or "".
func markBold(rows []rankRow) string {
	cols := []struct {
		name string
		out  func(*rankRow) bool
		bold func(*rankRow) *bool
	}{
		{"mean step", func(r *rankRow) bool { return r.StepOut }, func(r *rankRow) *bool { return &r.StepBold }},
		{"compute", func(r *rankRow) bool { return r.ComputeOut }, func(r *rankRow) *bool { return &r.ComputeBold }},
		{"communication", func(r *rankRow) bool { return r.CommOut }, func(r *rankRow) *bool { return &r.CommBold }},
	}
	var spread []string
	for _, c := range cols {
		n := 0
		for i := range rows {
			if c.out(&rows[i]) {
				n++
			}
		}
		wide := 2*n > len(rows)
		if wide {
			spread = append(spread, fmt.Sprintf("%s (%d of %d ranks)", c.name, n, len(rows)))
		}
		for i := range rows {
			*c.bold(&rows[i]) = c.out(&rows[i]) && !wide
		}
	}
	if len(spread) == 0 {
		return ""
	}
	marks := "so that column marks none"
	if len(spread) > 1 {
		marks = "so those columns mark none"
	}
	return "Most ranks are 10% or more from the median in " + strings.Join(spread, " and ") + ": the ranks differ too widely for one to be typical, " + marks + "."
}

// stragglerLine says which rank paces the job and what the ranks lose
// waiting for it, or "" without a straggler. It follows the rank table
// because the straggler's window shows none of that wait (straggler-rank's
// impact is 0 there, the wait being on the other ranks), so no finding
// ranks it first. It names no finding as the cause: the delay may come
// from before the profiled window (a late step start, a slow batch), which
// no finding of the straggler's window measures.
func stragglerLine(r *engine.Result, rows []rankRow) string {
	for _, row := range rows {
		if !row.Straggler {
			continue
		}
		f := r.Traces[row.Index].Facts
		if f == nil || f.RankLastArrivalRatio == nil || f.RanksCollectiveWaitRatio == nil {
			return ""
		}
		return fmt.Sprintf("Rank %s paces the job: it starts %s of the collectives last, and the ranks wait a median %s %s for the last arrival. "+
			"What delays rank %s (its findings, or work before the window: a late step start, a slow batch) sets the job's pace; "+
			"on the other ranks, a saving smaller than their wait only lengthens the wait until rank %s gets faster.",
			row.Rank, fmtPct(*f.RankLastArrivalRatio), fmtPct(*f.RanksCollectiveWaitRatio), ofTime(f), row.Rank, row.Rank)
	}
	return ""
}

// dev is the largest distance of a ratio to the median from 1.
func dev(rs ...*float64) float64 {
	d := 0.0
	for _, r := range rs {
		if r != nil && !math.IsNaN(*r) {
			d = max(d, math.Abs(*r-1))
		}
	}
	return d
}

// rankTable returns the rows when the result holds two or more ranks
// analyzed together, else nil.
func rankTable(r *engine.Result) []rankRow {
	var rows []rankRow
	for i, tr := range r.Traces {
		if tr == nil || tr.Facts == nil || tr.Facts.RankCount == nil || *tr.Facts.RankCount < 2 {
			return nil
		}
		f := tr.Facts
		row := rankRow{Index: i, Path: tr.Input.Path, Source: tr.RankSource}
		for _, fd := range tr.Findings {
			if !isMinor(fd) { // as the trace's own Findings list counts them
				row.Findings++
			}
		}
		if tr.Rank != nil {
			row.Rank = fmt.Sprint(*tr.Rank)
		}
		row.StepMean = nullMark
		if f.StepTimeUS != nil {
			row.StepMean = fmtMS(f.StepTimeUS.Mean)
		}
		row.StepOut = over(f.RankStepTimeOverMedian)
		row.Busy = pctOrNull(f.GPUBusyRatio)
		row.Compute, row.ComputeOut = relCell(f, f.ComputeKernelTimeRatio, f.RankComputeOverMedian)
		row.Comm, row.CommOut = relCell(f, f.CommKernelTimeRatio, f.RankCommOverMedian)
		if !f.HasGPU && f.HostCommTimeRatio != nil {
			// CPU ranks communicate on the host (gloo): its collectives' time.
			row.Comm, row.CommOut = relCell(f, f.HostCommTimeRatio, nil)
		}
		row.Exposed = pctOrNull(f.ExposedCommRatio)
		row.LastArrival = pctOrNull(f.RankLastArrivalRatio)
		row.Straggler = f.RankStraggler != nil && *f.RankStraggler
		row.dev = dev(f.RankStepTimeOverMedian, f.RankComputeOverMedian, f.RankCommOverMedian)
		rows = append(rows, row)
	}
	return rows
}

func over(r *float64) bool { return r != nil && (*r >= 1+outlierBand || *r <= 1-outlierBand) }

func pctOrNull(r *float64) string {
	if r == nil {
		return nullMark
	}
	return fmtPct(*r)
}

// relCell formats time per step and its ratio to the median across ranks:
// "1.02 ms (1.17× median)".
func relCell(f *facts.Facts, ratio, rel *float64) (string, bool) {
	if ratio == nil || f.WindowUS <= 0 {
		return nullMark, false
	}
	per := *ratio * f.WindowUS / float64(max(f.StepsCount, 1))
	s := fmtMS(per)
	if rel != nil {
		s += " (" + fixed(*rel, 2) + "× median)"
	}
	return s, over(rel)
}

// mdRankTable writes the per-rank table in Markdown; outliers are bold and
// the straggler is named.
func mdRankTable(b *strings.Builder, foc rankFocus) {
	rows := foc.Rows
	src := rows[0].Source
	fmt.Fprintf(b, "### Ranks (%d, identity from %s)\n\n", len(rows)+foc.Hidden, mdText(src))
	b.WriteString("Values 10% or more away from the median rank are **bold**; the straggler is the rank the others wait for at collectives.")
	if foc.Spread != "" {
		b.WriteString(" " + mdText(foc.Spread))
	}
	b.WriteString("\n\n")
	b.WriteString("| Rank | Mean step | GPU busy | Compute / step | Communication / step | Exposed comm | Last at collectives | Findings |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	bold := func(s string, on bool) string {
		if on && s != nullMark {
			return "**" + s + "**"
		}
		return s
	}
	for _, r := range rows {
		rank := mdCell(r.Rank)
		if r.Straggler {
			rank += " ⚠ straggler"
		}
		if r.Typical {
			rank += " (median)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", rank, bold(r.StepMean, r.StepBold), r.Busy, bold(r.Compute, r.ComputeBold), bold(r.Comm, r.CommBold), r.Exposed, r.LastArrival, r.Findings)
	}
	b.WriteString("\n")
	if foc.Straggler != "" {
		b.WriteString(mdText(foc.Straggler) + "\n\n")
	}
	if line := foc.HiddenLine(); line != "" {
		b.WriteString(mdText(line) + "\n\n")
	}
}

// shownViews keeps the views of the traces foc shows.
func shownViews(views []traceView, foc rankFocus) []traceView {
	if foc.show == nil {
		return views
	}
	out := views[:0:0]
	for _, v := range views {
		if foc.Shows(v.Index) {
			out = append(out, v)
		}
	}
	return out
}
