package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// CommStat is one host-side collective call name in W: calls, the summed
// time clipped to W (microseconds) and how many host threads ran it.
type CommStat struct {
	Name    string  `json:"name"`
	Calls   int64   `json:"calls"`
	TimeUS  float64 `json:"time_us"`
	Threads int     `json:"threads"`
}

// maxCommStats bounds Facts.HostCommTop.
const maxCommStats = 5

// comm derives the host-side collective facts (gloo and c10d calls, which
// block host threads on CPU jobs), the all-reduce count per step and the
// allocator call count per step.
func (d *deriver) comm() {
	if d.windowNS <= 0 {
		return
	}
	evs := d.t.Events
	var commIv, compute []interval
	type agg struct {
		calls   int64
		ns      int64
		threads map[thread]bool
	}
	byName := map[trace.Str]*agg{}
	counts := map[string]int64{} // all-reduce counts by where they were seen
	var alloc int64
	for i := range evs {
		e := &evs[i]
		if e.Ph != trace.PhComplete || !d.inWindow(e.TS) {
			continue
		}
		if e.Cat == trace.CatKernel {
			if d.hasGPU && e.DeviceID() == d.primary && d.is(e, kCommKernel) && d.is(e, kAllReduce) {
				counts["kernel"]++
			}
			continue
		}
		if !isCPU(e) {
			continue
		}
		switch {
		case d.is(e, kCommCPU):
			commIv = append(commIv, interval{e.TS, e.End()})
			a := byName[e.Name]
			if a == nil {
				a = &agg{threads: map[thread]bool{}}
				byName[e.Name] = a
			}
			a.calls++
			a.ns += ivset(d.window).clipLen(e.TS, e.End())
			a.threads[thread{e.PID, e.TID}] = true
			if d.is(e, kAllReduce) {
				name := d.t.Name(e)
				counts[name[:strings.IndexAny(name, ":")+1]]++ // by prefix: gloo:, nccl:, c10d:
			}
		case e.Cat.IsRuntime():
			if d.is(e, kAllocator) {
				alloc++
			}
		}
	}
	if len(commIv) > 0 {
		// Other host work that may hide the collectives: every CPU
		// operator (collectives excluded).
		for i := range evs {
			e := &evs[i]
			if e.Ph == trace.PhComplete && (e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone) && !d.is(e, kCommCPU) && !d.isAnnotation(e) && d.inWindow(e.TS) {
				compute = append(compute, interval{e.TS, e.End()})
			}
		}
	}
	commSet := intersect(unionOf(commIv), ivset(d.window))
	d.f.HostCommTimeRatio = d.ratio(commSet.total())
	d.f.HostCommExposedRatio = d.ratio(commSet.total() - overlap(commSet, unionOf(compute)))
	var most int64
	for _, n := range counts {
		most = max(most, n)
	}
	d.f.AllReducePerStep = d.perStep(most)
	d.f.AllocatorCallsPerStep = d.perStep(alloc)
	for n, a := range byName {
		d.f.HostCommTop = append(d.f.HostCommTop, CommStat{Name: d.t.Str(n), Calls: a.calls, TimeUS: float64(a.ns) / 1e3, Threads: len(a.threads)})
	}
	slices.SortFunc(d.f.HostCommTop, func(a, b CommStat) int { return cmp.Or(cmp.Compare(b.TimeUS, a.TimeUS), cmp.Compare(a.Name, b.Name)) })
	if len(d.f.HostCommTop) > maxCommStats {
		d.f.HostCommTop = d.f.HostCommTop[:maxCommStats]
	}
}
