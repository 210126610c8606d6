package engine

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Rank sources, in the order they are tried.
const (
	RankFromDistributedInfo = "distributedInfo"
	RankFromFileName        = "file name"
	RankFromInputOrder      = "input order"
)

// rankInName matches rank numbers in trace file names: rank-3, rank_3,
// rank3, worker3 (tensorboard_trace_handler's worker name), _rank_3.
var rankInName = regexp.MustCompile(`(?i)(?:rank|worker)[-_]?(\d+)`)

// stragglerMargin is how far over the median a rank's compute time must be
// to call it the straggler when there are no collectives to align.
const stragglerMargin = 1.05

// stragglerLastShare: a rank that starts at least this share of the
// collectives last is the straggler (the others wait for it in NCCL).
const stragglerLastShare = 0.5

// assignRanks sets each trace's rank and says whether the traces are the
// ranks of one job: distributedInfo ranks when every trace has one and they
// are distinct, else rank numbers in the file names (rank3, worker3) when
// every name has a distinct one. Otherwise ranks follow the input order
// and the traces are analyzed separately; the returned note says why.
func assignRanks(trs []*TraceResult) (ranks bool, note string) {
	fromInfo, fromName := true, true
	seenInfo, seenName := map[int64]string{}, map[int64]bool{}
	names := make([]int64, len(trs))
	for i, tr := range trs {
		if r := tr.Facts.Rank; r == nil {
			fromInfo = false
		} else if other, dup := seenInfo[*r]; dup {
			fromInfo = false
			note = fmt.Sprintf("rank %d appears in %s and %s (several profiling cycles or runs?): traces are analyzed separately, without cross-rank facts", *r, other, tr.Input.Path)
		} else {
			seenInfo[*r] = tr.Input.Path
		}
		m := rankInName.FindStringSubmatch(filepath.Base(tr.Input.Path))
		if m == nil {
			fromName = false
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || seenName[n] {
			fromName = false
			continue
		}
		seenName[n], names[i] = true, n
	}
	if note != "" {
		fromName = false
	}
	for i, tr := range trs {
		r := int64(i)
		switch {
		case fromInfo:
			r, tr.RankSource = *tr.Facts.Rank, RankFromDistributedInfo
		case fromName:
			r, tr.RankSource = names[i], RankFromFileName
			if tr.Facts.Rank == nil && len(trs) > 1 {
				tr.Facts.Rank = ptr(r)
			}
		default:
			tr.RankSource = RankFromInputOrder
		}
		tr.Rank = &r
	}
	ranks = fromInfo || fromName
	if !ranks && note == "" && len(trs) > 1 {
		note = fmt.Sprintf("%d traces without rank identity (no distinct distributedInfo ranks or rank numbers in the file names): analyzed separately, without cross-rank facts", len(trs))
	}
	return ranks, note
}

// crossRank sets the cross-rank facts on every trace when there are two or
// more. Compute and communication time per step are the kernel time ratios
// times the window, over the steps (1 without steps).
func crossRank(trs []*TraceResult) {
	if len(trs) < 2 {
		return
	}
	n := int64(len(trs))
	perStep := func(f *facts.Facts, ratio *float64) (float64, bool) {
		if ratio == nil || f.WindowUS <= 0 {
			return 0, false
		}
		return *ratio * f.WindowUS / float64(max(f.StepsCount, 1)), true
	}
	var steps, compute, comm []float64
	for _, tr := range trs {
		f := tr.Facts
		f.RankCount = &n
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
	full := len(compute) == len(trs) && medCompute > 0
	var slowest *TraceResult
	for _, tr := range trs {
		f := tr.Facts
		if f.StepTimeUS != nil && len(steps) == len(trs) && medStep > 0 {
			f.RankStepTimeOverMedian = ptr(f.StepTimeUS.Mean / medStep)
		}
		if v, ok := perStep(f, f.ComputeKernelTimeRatio); ok && full {
			f.RankComputeOverMedian = ptr(v / medCompute)
			if slowest == nil || *f.RankComputeOverMedian > *slowest.Facts.RankComputeOverMedian {
				slowest = tr
			}
		}
		if v, ok := perStep(f, f.CommKernelTimeRatio); ok && len(comm) == len(trs) && medComm > 0 {
			f.RankCommOverMedian = ptr(v / medComm)
		}
	}
	if full {
		spread := (slices.Max(compute) - slices.Min(compute)) / medCompute
		for _, tr := range trs {
			tr.Facts.RanksComputeSpreadRatio = ptr(spread)
		}
	}
	// The straggler is the rank the others wait for: last to start most
	// collectives; without collectives, the slowest compute well over the
	// median.
	if collectiveSkew(trs) {
		for _, tr := range trs {
			tr.Facts.RankStraggler = ptr(*tr.Facts.RankLastArrivalRatio >= stragglerLastShare)
		}
	} else if full {
		for _, tr := range trs {
			tr.Facts.RankStraggler = ptr(tr == slowest && *tr.Facts.RankComputeOverMedian >= stragglerMargin)
		}
	}
}

// collectiveSkew aligns the k-th collective kernel of every rank (ranks
// issue collectives in the same order) and measures how late each rank
// starts it compared with the earliest, and how often it is the last. It
// reports whether any collective could be aligned.
func collectiveSkew(trs []*TraceResult) bool {
	k := math.MaxInt
	for _, tr := range trs {
		k = min(k, len(tr.Facts.Collectives))
	}
	if k == 0 {
		return false
	}
	late := make([]float64, len(trs))
	wait := make([]float64, len(trs))
	last := make([]int, len(trs))
	skews := make([]float64, k)
	for c := 0; c < k; c++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, tr := range trs {
			s := tr.Facts.Collectives[c].StartUS
			lo, hi = min(lo, s), max(hi, s)
		}
		skews[c] = hi - lo
		latest := -1
		for r, tr := range trs {
			s := tr.Facts.Collectives[c].StartUS
			late[r] += s - lo
			if latest < 0 || s > trs[latest].Facts.Collectives[c].StartUS {
				latest = r
			}
		}
		last[latest]++
		for r, tr := range trs {
			wait[r] += hi - tr.Facts.Collectives[c].StartUS
		}
	}
	var waits []float64
	for r, tr := range trs {
		if w := tr.Facts.WindowUS; w > 0 {
			tr.Facts.RankCollectiveWaitRatio = ptr(min(1, wait[r]/w))
			waits = append(waits, *tr.Facts.RankCollectiveWaitRatio)
		}
	}
	if len(waits) == len(trs) {
		m := median(waits)
		for _, tr := range trs {
			tr.Facts.RanksCollectiveWaitRatio = ptr(m)
		}
	}
	slices.Sort(skews)
	var sum float64
	for _, s := range skews {
		sum += s
	}
	stats := facts.StepStats{Mean: sum / float64(k), P50: quantile(skews, 0.5), P90: quantile(skews, 0.9), Max: skews[k-1]}
	for r, tr := range trs {
		st := stats
		tr.Facts.CollectiveSkewUS = &st
		tr.Facts.RankCollectiveLatenessUS = ptr(late[r] / float64(k))
		tr.Facts.RankLastArrivalRatio = ptr(float64(last[r]) / float64(k))
	}
	return true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.5)
}

// quantile interpolates linearly between order statistics of sorted s.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func ptr[T any](v T) *T { return &v }
