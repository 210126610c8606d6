package engine

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

func rankResult(path string, rank *int64, compute float64, starts ...float64) *TraceResult {
	f := &facts.Facts{Rank: rank, WindowUS: 1000, StepsCount: 1, StepTimeUS: &facts.StepStats{Mean: 1000}}
	f.ComputeKernelTimeRatio = &compute
	for _, s := range starts {
		f.Collectives = append(f.Collectives, facts.Collective{Name: "ncclKernel_AllReduce", StartUS: s, DurUS: 10})
	}
	return &TraceResult{Input: Input{Path: path}, Facts: f}
}

func TestAssignRanks(t *testing.T) {
	r := func(v int64) *int64 { return &v }
	trs := []*TraceResult{rankResult("a/rank-3.json", r(1), 0.5), rankResult("a/rank-2.json", r(0), 0.5)}
	if ok, _ := assignRanks(trs); !ok || *trs[0].Rank != 1 || trs[0].RankSource != RankFromDistributedInfo {
		t.Errorf("distributedInfo: rank %d from %s", *trs[0].Rank, trs[0].RankSource)
	}
	trs = []*TraceResult{rankResult("a/worker7.pt.trace.json", nil, 0.5), rankResult("a/worker2.pt.trace.json", r(0), 0.5)}
	if ok, _ := assignRanks(trs); !ok || *trs[0].Rank != 7 || trs[0].RankSource != RankFromFileName || *trs[0].Facts.Rank != 7 {
		t.Errorf("file name: rank %d from %s", *trs[0].Rank, trs[0].RankSource)
	}
	trs = []*TraceResult{rankResult("a/x.json", nil, 0.5), rankResult("a/y.json", nil, 0.5)}
	ok, note := assignRanks(trs)
	if ok || note == "" || *trs[1].Rank != 1 || trs[1].RankSource != RankFromInputOrder {
		t.Errorf("input order: ranks %v note %q rank %d from %s", ok, note, *trs[1].Rank, trs[1].RankSource)
	}
	// Two files of rank 0 (two profiling cycles): not ranks of one job.
	trs = []*TraceResult{rankResult("a/c1.json", r(0), 0.5), rankResult("a/c2.json", r(0), 0.5)}
	if ok, note := assignRanks(trs); ok || !strings.Contains(note, "rank 0 appears in a/c1.json and a/c2.json") {
		t.Errorf("duplicate ranks: %v %q", ok, note)
	}
}

// crossRank applies facts.CrossRank to the traces' facts.
func TestCrossRankApplied(t *testing.T) {
	trs := []*TraceResult{
		rankResult("r0.json", nil, 0.40, 100, 200, 300),
		rankResult("r1.json", nil, 0.50, 110, 220, 310),
		rankResult("r2.json", nil, 0.60, 130, 210, 340),
	}
	crossRank(trs)
	f := trs[2].Facts
	if f.RankCount == nil || *f.RankCount != 3 || f.RankStraggler == nil || !*f.RankStraggler || !near(*f.RankComputeOverMedian, 1.2) {
		t.Errorf("cross-rank facts not applied: %+v", f)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
