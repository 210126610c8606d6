package facts

import (
	"cmp"
	"slices"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// memory derives the profile_memory facts from [memory] instant events of
// the primary device (Device Id; all devices when the trace has no GPU).
// Allocated bytes are args["Total Allocated"]; in the 2021 format, which
// has only Bytes (positive: allocated, negative: freed), they are the
// running sum of Bytes from the trace's start: a lower bound, as memory
// allocated before the trace began is not seen.
func (d *deriver) memory() {
	if !d.f.HasMemory {
		return
	}
	evs := d.t.Events
	var mem []int
	withTotal := false
	for i := range evs {
		e := &evs[i]
		if e.Ph != trace.PhInstant || e.Has&(trace.HasTotalAllocated|trace.HasBytes) == 0 || d.t.Name(e) != "[memory]" {
			continue
		}
		if d.hasGPU && (e.Has&trace.HasDeviceID == 0 || int64(e.Device) != d.primary) {
			continue
		}
		withTotal = withTotal || e.Has&trace.HasTotalAllocated != 0
		mem = append(mem, i)
	}
	if len(mem) == 0 {
		return
	}
	slices.SortStableFunc(mem, func(a, b int) int { return cmp.Compare(evs[a].TS, evs[b].TS) })
	// allocated[k]: bytes allocated after mem[k].
	allocated := make([]int64, len(mem))
	var run int64
	for k, i := range mem {
		e := &evs[i]
		switch {
		case withTotal && e.Has&trace.HasTotalAllocated != 0:
			run = e.TotalAllocated
		case !withTotal:
			run = max(0, run+e.Bytes)
		}
		allocated[k] = run
	}
	var peak, allocs int64
	for k, i := range mem {
		e := &evs[i]
		peak = max(peak, allocated[k])
		if e.Bytes > 0 && d.inWindow(e.TS) {
			allocs++
		}
	}
	d.f.MemoryPeakAllocatedBytes = i64(peak)
	if dev := d.f.Device; dev != nil && dev.TotalMemoryBytes != nil && *dev.TotalMemoryBytes > 0 {
		d.f.MemoryPeakRatio = f64(float64(peak) / float64(*dev.TotalMemoryBytes))
	}
	d.f.MemoryAllocsPerStep = d.perStep(allocs)
	// Allocated bytes at each step's end: the last sample before it.
	var xs, ys []float64
	for k, w := range d.stepSpan {
		if !d.f.HasSteps {
			break
		}
		j, _ := slices.BinarySearchFunc(mem, w.e, func(i int, t int64) int { return cmp.Compare(evs[i].TS, t) })
		if j == 0 {
			continue
		}
		xs = append(xs, float64(k))
		ys = append(ys, float64(allocated[j-1]))
	}
	if len(xs) >= 2 {
		d.f.MemoryGrowthBytesPerStep = f64(slope(xs, ys))
	}
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// setup derives profiling-setup and step-variance facts.
func (d *deriver) setup() {
	evs := d.t.Events
	gpuCorr := newCorrSet(evs, d.gpuActs)
	var launches, orphans int64
	for _, i := range d.calls {
		e := &evs[i]
		if !d.is(e, kLaunch) || !d.inWindow(e.TS) {
			continue
		}
		launches++
		if e.Has&trace.HasCorrelation != 0 && !gpuCorr.has(e.Correlation) {
			orphans++
		}
	}
	d.f.GPUActivityMissing = launches > 0 && !d.hasGPU
	if launches > 0 {
		d.f.OrphanLaunchRatio = f64(float64(orphans) / float64(launches))
	}
	if d.f.StepsCount > 0 {
		d.f.TraceBytesPerStep = f64(float64(d.t.Bytes) / float64(d.f.StepsCount))
		st := d.f.StepTimeUS
		if st.P50 > 0 {
			d.f.StepTimeMaxOverP50 = f64(st.Max / st.P50)
		}
		if d.windowNS > 0 {
			w := d.stepSpan[0]
			d.f.FirstStepTimeRatio = d.ratio(w.e - w.s)
		}
	}
}
