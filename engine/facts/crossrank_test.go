package facts

import (
	"reflect"
	"testing"
)

func rankFacts(compute float64, starts ...float64) *Facts {
	f := &Facts{WindowUS: 1000, StepsCount: 1, StepTimeUS: &StepStats{Mean: 1000}}
	f.ComputeKernelTimeRatio = &compute
	for _, s := range starts {
		f.Collectives = append(f.Collectives, Collective{Name: "ncclKernel_AllReduce", StartUS: s, DurUS: 10})
	}
	return f
}

// Rank 2 starts two of three collectives last: it is the straggler. Skew
// per collective: 30, 20, 40 -> mean 30, p50 30, max 40.
func TestCrossRankStraggler(t *testing.T) {
	fs := []*Facts{
		rankFacts(0.40, 100, 200, 300),
		rankFacts(0.50, 110, 220, 310),
		rankFacts(0.60, 130, 210, 340),
	}
	before := *fs[2]
	c := CrossRank(fs)
	if !reflect.DeepEqual(*fs[2], before) {
		t.Error("CrossRank changed its input")
	}
	f := c[2]
	if *f.RankCount != 3 || f.RankStraggler == nil || !*f.RankStraggler || *c[0].RankStraggler {
		t.Fatalf("straggler flags: %v %v %v", *c[0].RankStraggler, *c[1].RankStraggler, *f.RankStraggler)
	}
	if !near(*f.RankLastArrivalRatio, 2.0/3) || !near(*c[1].RankLastArrivalRatio, 1.0/3) {
		t.Errorf("last arrival ratios %v %v", *c[0].RankLastArrivalRatio, *f.RankLastArrivalRatio)
	}
	sk := f.CollectiveSkewUS
	if !near(sk.Mean, 30) || !near(sk.P50, 30) || !near(sk.Max, 40) {
		t.Errorf("collective skew %+v", sk)
	}
	// Lateness of rank 2: (30 + 10 + 40) / 3 us.
	if !near(*f.RankCollectiveLatenessUS, 80.0/3) {
		t.Errorf("rank 2 lateness %v", *f.RankCollectiveLatenessUS)
	}
	// Compute 0.4/0.5/0.6 of 1000 us: median 500, rank 2 at 1.2, spread 0.4.
	if !near(*f.RankComputeOverMedian, 1.2) || !near(*f.RanksComputeSpreadRatio, 0.4) {
		t.Errorf("compute over median %v spread %v", *f.RankComputeOverMedian, *f.RanksComputeSpreadRatio)
	}
	// Waits: rank 0 (30+20+40)/1000, rank 1 (20+0+30)/1000, rank 2 (0+10+0)/1000; median 0.05.
	if !near(*c[0].RankCollectiveWaitRatio, 0.09) || !near(*f.RanksCollectiveWaitRatio, 0.05) {
		t.Errorf("wait ratios %v median %v", *c[0].RankCollectiveWaitRatio, *f.RanksCollectiveWaitRatio)
	}
	// Without rank numbers no rank can be named; with them, every rank
	// names rank 2.
	if c[0].RanksStraggler != nil {
		t.Errorf("ranks_straggler %v without rank numbers", *c[0].RanksStraggler)
	}
	for r, f := range fs {
		n := int64(r)
		f.Rank = &n
	}
	for r, f := range CrossRank(fs) {
		if f.RanksStraggler == nil || *f.RanksStraggler != 2 {
			t.Errorf("rank %d: ranks_straggler %v, want 2", r, f.RanksStraggler)
		}
	}
	// A single trace gets no cross-rank facts.
	if one := CrossRank([]*Facts{rankFacts(0.4, 100)}); one != nil {
		t.Error("cross-rank facts on a single trace")
	}
}

// Without collectives, the slowest compute at least 5% over the median is
// the straggler; the others are not.
func TestCrossRankStragglerWithoutCollectives(t *testing.T) {
	c := CrossRank([]*Facts{rankFacts(0.50), rankFacts(0.50), rankFacts(0.60)})
	if c[2].RankStraggler == nil || !*c[2].RankStraggler || *c[0].RankStraggler || c[0].CollectiveSkewUS != nil {
		t.Errorf("straggler without collectives: %v %v, skew %v", c[0].RankStraggler, c[2].RankStraggler, c[0].CollectiveSkewUS)
	}
	f := rankFacts(0.5)
	f.RankStraggler = boolPtr(true)
	f.ApplyCrossRank(CrossRankFacts{RankCount: c[0].RankCount})
	if *f.RankCount != 3 || !*f.RankStraggler {
		t.Error("ApplyCrossRank: nil fields must keep their values")
	}
}

// Ranks that start every collective together have no last one: no rank
// is the straggler (rank 0 was, at 100% last arrivals, when ties went to
// the first rank).
func TestCrossRankTieIsNoStraggler(t *testing.T) {
	c := CrossRank([]*Facts{rankFacts(0.5, 100, 200, 300), rankFacts(0.5, 100, 200, 300)})
	for r, f := range c {
		if f.RankStraggler == nil || *f.RankStraggler || !near(*f.RankLastArrivalRatio, 0) {
			t.Errorf("rank %d: straggler %v, last arrivals %v; want neither", r, fmtBool(f.RankStraggler), *f.RankLastArrivalRatio)
		}
	}
}

func fmtBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
