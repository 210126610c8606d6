package facts

import (
	"cmp"
	"math"
	"slices"
)

// Cross-rank facts
//
// When several traces are the ranks of one job, each rank's facts are
// compared with the others'. CrossRank is a pure function of the ranks'
// facts; the engine applies its result to each rank (Facts.ApplyCrossRank)
// before the rules run, so the rules see the rank_* and ranks_* facts.

// StragglerMargin is how far over the median a rank's compute time must be
// to call it the straggler when there are no collectives to align.
const StragglerMargin = 1.05

// StragglerLastShare: a rank that starts at least this share of the
// collectives last is the straggler (the others wait for it in NCCL).
const StragglerLastShare = 0.5

// CrossRankFacts are one rank's cross-rank facts (the Facts fields of the
// same names); nil where the ranks do not give them.
type CrossRankFacts struct {
	RankCount                *int64
	RankStepTimeOverMedian   *float64
	RankComputeOverMedian    *float64
	RankCommOverMedian       *float64
	RankCollectiveLatenessUS *float64
	RankLastArrivalRatio     *float64
	RankCollectiveWaitRatio  *float64
	RanksCollectiveWaitRatio *float64
	RankStraggler            *bool
	RanksStraggler           *int64
	RanksComputeSpreadRatio  *float64
	CollectiveSkewUS         *StepStats
	// CollectiveBW is, per collectives-table row (kind, process group) that
	// more than one rank has with a bus bandwidth, the largest of those
	// ranks' bus bandwidths (GB/s) and how many ranks had it: see
	// CollectiveStat.RanksBusBWGBps.
	CollectiveBW []RankCollectiveBW
}

// RankCollectiveBW is the cross-rank bus bandwidth of one collectives-table
// row.
type RankCollectiveBW struct {
	Kind, Group string
	BusBWGBps   float64
	Ranks       int64
}

// ApplyCrossRank sets f's cross-rank facts from c; facts c leaves nil keep
// their values.
func (f *Facts) ApplyCrossRank(c CrossRankFacts) {
	set := func(dst **float64, v *float64) {
		if v != nil {
			*dst = v
		}
	}
	if c.RankCount != nil {
		f.RankCount = c.RankCount
	}
	set(&f.RankStepTimeOverMedian, c.RankStepTimeOverMedian)
	set(&f.RankComputeOverMedian, c.RankComputeOverMedian)
	set(&f.RankCommOverMedian, c.RankCommOverMedian)
	set(&f.RankCollectiveLatenessUS, c.RankCollectiveLatenessUS)
	set(&f.RankLastArrivalRatio, c.RankLastArrivalRatio)
	set(&f.RankCollectiveWaitRatio, c.RankCollectiveWaitRatio)
	set(&f.RanksCollectiveWaitRatio, c.RanksCollectiveWaitRatio)
	set(&f.RanksComputeSpreadRatio, c.RanksComputeSpreadRatio)
	if c.RankStraggler != nil {
		f.RankStraggler = c.RankStraggler
	}
	if c.RanksStraggler != nil {
		f.RanksStraggler = c.RanksStraggler
	}
	if c.CollectiveSkewUS != nil {
		f.CollectiveSkewUS = c.CollectiveSkewUS
	}
	for _, bw := range c.CollectiveBW {
		for i := range f.CollectiveStats {
			if r := &f.CollectiveStats[i]; r.Kind == bw.Kind && r.Group == bw.Group {
				r.RanksBusBWGBps, r.RanksCount = f64(bw.BusBWGBps), bw.Ranks
			}
		}
	}
}

// CrossRank returns the cross-rank facts of each rank, in the order given;
// nil for fewer than two ranks. It reads the ranks' facts and changes none.
// Compute and communication time per step are the kernel time ratios times
// the window, over the steps (1 without steps). The straggler is the rank
// the others wait for: the last to start at least StragglerLastShare of
// the collectives; without collectives, the slowest compute at least
// StragglerMargin over the median.
func CrossRank(ranks []*Facts) []CrossRankFacts {
	if len(ranks) < 2 {
		return nil
	}
	out := make([]CrossRankFacts, len(ranks))
	n := int64(len(ranks))
	perStep := func(f *Facts, ratio *float64) (float64, bool) {
		if ratio == nil || f.WindowUS <= 0 {
			return 0, false
		}
		return *ratio * f.WindowUS / float64(max(f.StepsCount, 1)), true
	}
	var steps, compute, comm []float64
	for i, f := range ranks {
		out[i].RankCount = &n
		if f.StepTimeUS != nil {
			steps = append(steps, f.StepTimeUS.Mean)
		}
		if v, ok := perStep(f, f.ComputeKernelTimeRatio); ok {
			compute = append(compute, v)
		}
		if v, ok := perStep(f, f.CommKernelTimeRatio); ok {
			comm = append(comm, v)
		}
	}
	medStep, medCompute, medComm := median(steps), median(compute), median(comm)
	full := len(compute) == len(ranks) && medCompute > 0
	slowest := -1
	for i, f := range ranks {
		c := &out[i]
		if f.StepTimeUS != nil && len(steps) == len(ranks) && medStep > 0 {
			c.RankStepTimeOverMedian = f64(f.StepTimeUS.Mean / medStep)
		}
		if v, ok := perStep(f, f.ComputeKernelTimeRatio); ok && full {
			c.RankComputeOverMedian = f64(v / medCompute)
			if slowest < 0 || *c.RankComputeOverMedian > *out[slowest].RankComputeOverMedian {
				slowest = i
			}
		}
		if v, ok := perStep(f, f.CommKernelTimeRatio); ok && len(comm) == len(ranks) && medComm > 0 {
			c.RankCommOverMedian = f64(v / medComm)
		}
	}
	if full {
		spread := (slices.Max(compute) - slices.Min(compute)) / medCompute
		for i := range out {
			out[i].RanksComputeSpreadRatio = f64(spread)
		}
	}
	if bw := collectiveBW(ranks); len(bw) > 0 {
		for i := range out {
			out[i].CollectiveBW = bw
		}
	}
	if collectiveSkew(ranks, out) {
		for i := range out {
			out[i].RankStraggler = boolPtr(*out[i].RankLastArrivalRatio >= StragglerLastShare)
		}
	} else if full {
		for i := range out {
			out[i].RankStraggler = boolPtr(i == slowest && *out[i].RankComputeOverMedian >= StragglerMargin)
		}
	}
	// Every rank learns the straggler's rank number, where it has one.
	for i, f := range ranks {
		if out[i].RankStraggler != nil && *out[i].RankStraggler && f.Rank != nil {
			for j := range out {
				out[j].RanksStraggler = f.Rank
			}
			break
		}
	}
	return out
}

// collectiveSkew aligns the k-th collective kernel of every rank (ranks
// issue collectives in the same order) and measures how late each rank
// starts it compared with the earliest, and how often it is the last,
// into out. It reports whether any collective could be aligned.
func collectiveSkew(ranks []*Facts, out []CrossRankFacts) bool {
	k := math.MaxInt
	for _, f := range ranks {
		k = min(k, len(f.Collectives))
	}
	if k == 0 {
		return false
	}
	late := make([]float64, len(ranks))
	wait := make([]float64, len(ranks))
	last := make([]int, len(ranks))
	skews := make([]float64, k)
	for c := 0; c < k; c++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, f := range ranks {
			s := f.Collectives[c].StartUS
			lo, hi = min(lo, s), max(hi, s)
		}
		skews[c] = hi - lo
		latest, atHi := -1, 0
		for r, f := range ranks {
			s := f.Collectives[c].StartUS
			late[r] += s - lo
			if s == hi {
				latest, atHi = r, atHi+1
			}
		}
		if atHi == 1 {
			last[latest]++ // ranks that start together: none is the last
		}
		for r, f := range ranks {
			wait[r] += hi - f.Collectives[c].StartUS
		}
	}
	var waits []float64
	for r, f := range ranks {
		if w := f.WindowUS; w > 0 {
			out[r].RankCollectiveWaitRatio = f64(min(1, wait[r]/w))
			waits = append(waits, *out[r].RankCollectiveWaitRatio)
		}
	}
	if len(waits) == len(ranks) {
		m := median(waits)
		for r := range out {
			out[r].RanksCollectiveWaitRatio = f64(m)
		}
	}
	slices.Sort(skews)
	var sum float64
	for _, s := range skews {
		sum += s
	}
	stats := StepStats{Mean: sum / float64(k), P50: percentile(skews, 0.5), P90: percentile(skews, 0.9), Max: skews[k-1]}
	for r := range out {
		st := stats
		out[r].CollectiveSkewUS = &st
		out[r].RankCollectiveLatenessUS = f64(late[r] / float64(k))
		out[r].RankLastArrivalRatio = f64(float64(last[r]) / float64(k))
	}
	return true
}

// collectiveBW is the cross-rank bus bandwidth of each collectives-table
// row (kind, process group) that two or more ranks measured: the largest
// of their bus bandwidths. A collective kernel runs until the group's last
// rank has arrived and the data has moved, so the rank that arrived last
// waited least and its kernel time is the closest to the transfer itself
// (the NCCL tests time a collective after a barrier for the same reason).
// Rows come in (kind, group) order.
func collectiveBW(ranks []*Facts) []RankCollectiveBW {
	type key struct{ kind, group string }
	best := map[key]*RankCollectiveBW{}
	for _, f := range ranks {
		for _, r := range f.CollectiveStats {
			if r.BusBWGBps == nil {
				continue
			}
			k := key{r.Kind, r.Group}
			b := best[k]
			if b == nil {
				b = &RankCollectiveBW{Kind: r.Kind, Group: r.Group}
				best[k] = b
			}
			b.Ranks++
			b.BusBWGBps = max(b.BusBWGBps, *r.BusBWGBps)
		}
	}
	var out []RankCollectiveBW
	for _, b := range best {
		if b.Ranks >= 2 {
			out = append(out, *b)
		}
	}
	slices.SortFunc(out, func(a, b RankCollectiveBW) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Group, b.Group))
	})
	return out
}

// median of v (linear interpolation between the middle order statistics);
// 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return percentile(s, 0.5)
}

func boolPtr(b bool) *bool { return &b }
