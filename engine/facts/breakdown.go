package facts

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// thread identifies a host thread.
type thread struct{ pid, tid trace.ID }

// breakdown derives the per-step role breakdown, the idle-gap causes, the
// GPU timeline, communication overlap and launch delays.
func (d *deriver) breakdown() {
	evs := d.t.Events
	// Sized by what indexTimelines counted: the runtime calls exactly, the
	// operators at most the other host events.
	kernel := hugemem.Make[interval](0, len(d.gpuActs))
	runtimeIv := hugemem.Make[interval](0, len(d.calls))
	cpuOp := hugemem.Make[interval](0, len(evs)-len(d.gpuActs)-len(d.calls)-len(d.instants))
	var comm, memcpy, memset, dl, commCPU []interval
	for i := range evs {
		e := &evs[i]
		if e.Ph != trace.PhComplete {
			continue
		}
		iv := interval{e.TS, e.End()}
		switch {
		case e.Cat.IsGPUActivity():
			if !d.hasGPU || e.DeviceID() != d.primary {
				continue
			}
			switch {
			case e.Cat == trace.CatMemcpy:
				memcpy = append(memcpy, iv)
			case e.Cat == trace.CatMemset:
				memset = append(memset, iv)
			case d.is(e, kCommKernel):
				comm = append(comm, iv)
			default:
				kernel = append(kernel, iv)
			}
		case !isCPU(e):
		case e.Cat.IsRuntime():
			runtimeIv = append(runtimeIv, iv)
		case d.is(e, kDataLoader):
			dl = append(dl, iv)
		case d.is(e, kCommCPU):
			commCPU = append(commCPU, iv)
		case (e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone) && !d.is(e, kStep):
			cpuOp = append(cpuOp, iv)
		}
	}
	win := ivset(d.window)
	kernelSet, commSet := unionOf(kernel), unionOf(comm)
	roleSets := []ivset{kernelSet, unionOf(memcpy), unionOf(memset), unite(commSet, unionOf(commCPU)), unionOf(runtimeIv), unionOf(dl), unionOf(cpuOp)}
	if d.f.HasSteps {
		d.steps2(win, roleSets)
	} else if d.windowNS > 0 {
		d.windowBreakdown(win, roleSets)
	}
	d.phaseBreakdown(win, roleSets)
	if d.hasGPU && d.windowNS > 0 {
		d.f.ComputeKernelTimeRatio = d.ratio(overlap(kernelSet, win))
	}
	d.collectives()
	d.collectiveTable(kernelSet)
	if len(comm) == 0 && d.singleRankGPU() {
		// A job of one rank (distributedInfo world_size 1) that ran GPU
		// work exchanged nothing: its communication is measured, and zero.
		// (Without distributedInfo the job may be one rank of many whose
		// collectives ran elsewhere: the facts stay null.)
		d.f.CommKernelTimeRatio, d.f.ExposedCommRatio = f64(0), f64(0)
		d.f.CollectiveStats = []CollectiveStat{}
	}
	if len(comm) > 0 && d.windowNS > 0 {
		commW := intersect(commSet, win)
		hidden := overlap(commW, kernelSet)
		d.f.CommKernelTimeRatio = d.ratio(commW.total())
		d.f.ExposedCommRatio = d.ratio(commW.total() - hidden)
		if t := commW.total(); t > 0 {
			d.f.CommOverlapRatio = f64(float64(hidden) / float64(t))
		}
	}
	if d.hasGPU && d.windowNS > 0 {
		d.idleCauses(win)
	}
	d.launchDelays()
}

// singleRankGPU reports a trace of a one-rank job (world_size 1) with
// primary-device kernels in W.
func (d *deriver) singleRankGPU() bool {
	return d.hasGPU && d.windowNS > 0 && d.f.WorldSize != nil && *d.f.WorldSize == 1 && d.f.KernelCount != nil && *d.f.KernelCount > 0
}

// steps2 fills Steps and the step_*_ratio facts.
func (d *deriver) steps2(win ivset, roleSets []ivset) {
	// Steps are disjoint and in time order (steps clips each at the next
	// one's start), and pieces come in time order: one cursor splits each
	// piece among the steps it crosses.
	spans := d.stepSpan
	perStep := make([][]int64, len(spans))
	for k := range perStep {
		perStep[k] = make([]int64, len(Roles))
	}
	totals := make([]int64, len(Roles))
	other := len(Roles) - 1
	k := 0
	partition(win, roleSets, func(owner int, s, e int64) {
		if owner < 0 {
			owner = other
		}
		for k < len(spans) && spans[k].e <= s {
			k++
		}
		for j := k; j < len(spans) && spans[j].s < e; j++ {
			if n := min(e, spans[j].e) - max(s, spans[j].s); n > 0 {
				perStep[j][owner] += n
				totals[owner] += n
			}
		}
	})
	steps := d.f.Examples["step"]
	for k, w := range spans {
		b := StepBreakdown{DurUS: float64(w.e-w.s) / 1e3, RolesUS: make(map[string]float64, len(Roles))}
		if k < len(steps) {
			b.Name, b.OffsetUS = steps[k].Name, steps[k].OffsetUS
		}
		if k < len(d.stepPhase) {
			b.Phase = d.stepPhase[k]
		}
		for r, n := range perStep[k] {
			b.RolesUS[Roles[r]] = float64(n) / 1e3
		}
		d.f.Steps = append(d.f.Steps, b)
	}
	d.slowStepExcess(perStep)
	d.setBreakdownRatios(totals)
}

// windowBreakdown fills the step_*_ratio facts of a trace without steps:
// the roles of the step breakdown over the whole window W, so the rules
// that read the breakdown run on inference and benchmark traces too.
func (d *deriver) windowBreakdown(win ivset, roleSets []ivset) {
	totals := make([]int64, len(Roles))
	other := len(Roles) - 1
	partition(win, roleSets, func(owner int, s, e int64) {
		if owner < 0 {
			owner = other
		}
		totals[owner] += e - s
	})
	d.setBreakdownRatios(totals)
}

func (d *deriver) setBreakdownRatios(totals []int64) {
	for r, p := range d.f.roleFields() {
		*p = d.ratio(totals[r])
	}
}

// slowStepExcess finds what made the slowest step slow: per breakdown role,
// the slowest step's time (by capped duration) minus the median over the
// steps, and the role with the largest excess. Needs 3 steps or more.
func (d *deriver) slowStepExcess(perStep [][]int64) {
	if len(perStep) < 3 || len(d.stepDur) != len(perStep) {
		return
	}
	slow := 0
	for k, ns := range d.stepDur {
		if ns > d.stepDur[slow] {
			slow = k
		}
	}
	best, bestNS := -1, int64(0)
	vals := make([]float64, len(perStep))
	for r := range Roles {
		for k := range perStep {
			vals[k] = float64(perStep[k][r])
		}
		sort.Float64s(vals)
		if ex := perStep[slow][r] - int64(percentile(vals, 0.5)); ex > bestNS {
			best, bestNS = r, ex
		}
	}
	if best < 0 {
		return
	}
	role := Roles[best]
	d.f.SlowStepExcessRole = &role
	d.f.SlowStepExcessUS = f64(float64(bestNS) / 1e3)
}

// timelineBuckets is the resolution of Facts.Timeline.
const timelineBuckets = 300

// timeline downsamples busy time and idle causes over the window's span
// into timelineBuckets buckets, each labelled with the kind holding most of
// its time; neighbours of one kind are merged.
type timeline struct {
	lo, hi int64
	width  float64
	acc    [][]int64 // per bucket, ns per kind (busy, then IdleCauses)
}

func (d *deriver) newTimeline() *timeline {
	lo, hi := d.window[0].s, d.window[len(d.window)-1].e
	tl := &timeline{lo: lo, hi: hi, width: float64(hi-lo) / timelineBuckets}
	if hi > lo {
		tl.acc = make([][]int64, timelineBuckets)
		for b := range tl.acc {
			tl.acc[b] = make([]int64, 1+len(IdleCauses))
		}
	}
	return tl
}

// add counts [s, e) for kind in the buckets it covers.
func (tl *timeline) add(kind int, s, e int64) {
	if tl.acc == nil {
		return
	}
	for b := int(float64(s-tl.lo) / tl.width); b < timelineBuckets; b++ {
		bs := tl.lo + int64(float64(b)*tl.width)
		be := tl.lo + int64(float64(b+1)*tl.width)
		if b == timelineBuckets-1 {
			be = tl.hi
		}
		if bs >= e {
			break
		}
		if n := min(be, e) - max(bs, s); n > 0 {
			tl.acc[b][kind] += n
		}
	}
}

// spans labels each bucket and merges neighbours of one kind.
func (tl *timeline) spans() []TimelineSpan {
	kinds := append([]string{"busy"}, IdleCauses...)
	var out []TimelineSpan
	for b := range tl.acc {
		best, bestN := -1, int64(0)
		for k, n := range tl.acc[b] {
			if n > bestN {
				best, bestN = k, n
			}
		}
		if best < 0 {
			continue
		}
		off := float64(b) * tl.width / 1e3
		if len(out) > 0 && out[len(out)-1].Kind == kinds[best] && near(out[len(out)-1].OffsetUS+out[len(out)-1].DurUS, off) {
			out[len(out)-1].DurUS += tl.width / 1e3
			continue
		}
		out = append(out, TimelineSpan{OffsetUS: off, DurUS: tl.width / 1e3, Kind: kinds[best]})
	}
	return out
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// launchDelays computes kernel start minus launch end over counted kernels
// with a launch link, clamped at 0: a kernel may start while its launch
// call is still returning (an idle GPU starts it at once; the call's own
// tail, such as the first launch's module load, runs on). A kernel that
// starts before its launch call begins is clock skew between host and
// device clocks and is reported as a warning.
func (d *deriver) launchDelays() {
	if !d.hasGPU {
		return
	}
	evs := d.t.Events
	delays := make([]float64, 0, len(d.gpuActs)) // at most one a GPU activity
	skew, first := 0, -1
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.Cat != trace.CatKernel || e.DeviceID() != d.primary || e.Has&trace.HasCorrelation == 0 || !d.inWindow(e.TS) {
			continue
		}
		li, ok := d.launch.get(e.Correlation)
		if !ok || !d.is(&evs[li], kLaunch) {
			continue
		}
		if e.TS < evs[li].TS {
			if skew == 0 {
				first = int(e.Index)
			}
			skew++
		}
		delay := max(e.TS-evs[li].End(), 0)
		delays = append(delays, float64(delay)/1e3)
	}
	if len(delays) == 0 {
		return
	}
	sort.Float64s(delays)
	var sum float64
	for _, v := range delays {
		sum += v
	}
	d.f.LaunchDelayUS = &StepStats{Mean: sum / float64(len(delays)), P50: percentile(delays, 0.5), P90: percentile(delays, 0.9), Max: delays[len(delays)-1]}
	if skew > 0 {
		d.f.Diagnostics = append(d.f.Diagnostics, trace.Diagnostic{
			Kind: trace.DiagWarning, Reason: "clock_skew", Offset: -1, Count: skew,
			Message: fmt.Sprintf("%d kernels start before their launch call begins (host/device clock skew; first is event %d); linked by correlation, launch delay clamped at 0", skew, first),
		})
	}
}

// collectives lists the primary device's communication kernels in W with
// absolute start times; on a CPU-only trace, the gloo collectives the
// communication threads ran (gloo:all_reduce, ...): each starts when its
// rank hands the work over, so the ranks align on them as on kernels.
func (d *deriver) collectives() {
	if !d.hasGPU {
		d.hostCollectives()
		return
	}
	evs := d.t.Events
	var idx []int
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.Cat == trace.CatKernel && e.DeviceID() == d.primary && d.is(e, kCommKernel) && d.inWindow(e.TS) {
			idx = append(idx, i)
		}
	}
	d.listCollectives(idx)
}

// listCollectives sets Facts.Collectives from the communication events
// idx, in start order with absolute start times, and their examples.
func (d *deriver) listCollectives(idx []int) {
	evs := d.t.Events
	sortByStart(evs, idx)
	for _, i := range idx {
		e := &evs[i]
		d.f.Collectives = append(d.f.Collectives, Collective{Name: d.t.Name(e), StartUS: float64(d.t.BaseTimeNS+e.TS) / 1e3, DurUS: float64(e.Dur) / 1e3})
	}
	d.commExamples(idx)
}

// commExamples sets Facts.Examples["comm"]: the longest communication
// events (kernels, or gloo calls on a CPU-only trace), longest first, ties
// by file order: the communication rules' evidence.
func (d *deriver) commExamples(idx []int) {
	if len(idx) == 0 {
		return
	}
	evs := d.t.Events
	long := slices.Clone(idx)
	slices.SortStableFunc(long, func(a, b int) int { return cmp.Or(cmp.Compare(evs[b].Dur, evs[a].Dur), cmp.Compare(a, b)) })
	refs := make([]EventRef, 0, min(len(long), d.cfg.Examples))
	for _, i := range long[:min(len(long), d.cfg.Examples)] {
		refs = append(refs, d.ref(&evs[i]))
	}
	d.f.Examples["comm"] = refs
}

// hostCollectives lists the gloo collectives in W (CPU-only traces) with
// absolute start times, in start order.
func (d *deriver) hostCollectives() {
	evs := d.t.Events
	var idx []int
	for _, i := range d.rare {
		e := &evs[i]
		if e.Ph == trace.PhComplete && isCPU(e) && d.is(e, kCommCPU) && d.inWindow(e.TS) && strings.HasPrefix(d.t.Name(e), "gloo:") {
			idx = append(idx, i)
		}
	}
	d.listCollectives(idx)
}
