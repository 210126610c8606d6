package reports

import (
	"fmt"
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
	Index                int // position in Result.Traces
	Rank                 string
	Source               string
	Path                 string
	StepMean             string
	StepOut              bool
	Busy                 string
	Compute, Comm        string // per step, "× median"
	ComputeOut, CommOut  bool
	Exposed, LastArrival string
	Straggler            bool
	Findings             int
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
		row := rankRow{Index: i, Path: tr.Input.Path, Source: tr.RankSource, Findings: len(tr.Findings)}
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
		row.Exposed = pctOrNull(f.ExposedCommRatio)
		row.LastArrival = pctOrNull(f.RankLastArrivalRatio)
		row.Straggler = f.RankStraggler != nil && *f.RankStraggler
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
func mdRankTable(b *strings.Builder, rows []rankRow) {
	src := rows[0].Source
	fmt.Fprintf(b, "### Ranks (%d, identity from %s)\n\n", len(rows), mdText(src))
	b.WriteString("Values 10% or more away from the median rank are **bold**; the straggler is the rank the others wait for at collectives.\n\n")
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
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", rank, bold(r.StepMean, r.StepOut), r.Busy, bold(r.Compute, r.ComputeOut), bold(r.Comm, r.CommOut), r.Exposed, r.LastArrival, r.Findings)
	}
	b.WriteString("\n")
}
