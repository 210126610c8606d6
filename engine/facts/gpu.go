package facts

import (
	"cmp"
	"slices"
	"sort"

	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// gpu derives busy/idle, kernel and memcpy facts for the primary device.
// Kernel and memcpy facts count events starting in W; busy and time ratios
// clip intervals to W (docs/ARCHITECTURE.md "Fine print").
func (d *deriver) gpu() {
	if !d.hasGPU {
		return
	}
	f, evs := d.f, d.t.Events
	busy := hugemem.Make[interval](0, len(d.gpuActs))
	var copies []interval
	var kernels, short, withLaunch, launchBound, linked, graph int64
	var mc, htod, dtoh, dtod, pageable, pageableHtoD, bytes int64
	var pageableIdx, shortIdx []int
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.DeviceID() != d.primary {
			continue
		}
		busy = append(busy, interval{e.TS, e.End()})
		if e.Cat == trace.CatMemcpy {
			copies = append(copies, interval{e.TS, e.End()})
		}
		if !d.inWindow(e.TS) {
			continue
		}
		switch e.Cat {
		case trace.CatKernel:
			kernels++
			if e.Dur < d.cfg.ShortKernelNS {
				short++
				shortIdx = append(shortIdx, i)
			}
			if e.Has&trace.HasCorrelation != 0 {
				if li, ok := d.launch.get(e.Correlation); ok {
					linked++
					if d.is(&evs[li], kGraphLaunch) {
						graph++
					}
					if d.is(&evs[li], kLaunch) {
						withLaunch++
						if evs[li].Dur >= e.Dur {
							launchBound++
						}
					}
				}
			}
		case trace.CatMemcpy:
			mc++
			switch {
			case d.is(e, kHtoD):
				htod++
			case d.is(e, kDtoH):
				dtoh++
			case d.is(e, kDtoD):
				dtod++
			}
			if d.is(e, kPageable) {
				pageable++
				if d.is(e, kHtoD) {
					pageableHtoD++
					if li, ok := d.launch.get(e.Correlation); ok && e.Has&trace.HasCorrelation != 0 {
						d.hot["memcpy"] = append(d.hot["memcpy"], li)
					}
				}
				pageableIdx = append(pageableIdx, i)
			}
			if b, ok := d.t.BytesOf(e); ok {
				bytes += b
			}
		}
	}
	d.busy = intersect(unionOf(busy), ivset(d.window))
	f.GPUBusyRatio = d.ratio(d.busy.total())
	if f.GPUBusyRatio != nil {
		f.GPUIdleRatio = f64(1 - *f.GPUBusyRatio)
	}
	f.KernelCount = i64(kernels)
	f.KernelsPerStep = d.perStep(kernels)
	if d.windowNS > 0 {
		f.KernelLaunchesPerMS = f64(float64(kernels) / (float64(d.windowNS) / 1e6))
	}
	if kernels > 0 {
		f.ShortKernelRatio = f64(float64(short) / float64(kernels))
	}
	if withLaunch > 0 {
		f.LaunchBoundKernelRatio = f64(float64(launchBound) / float64(withLaunch))
	}
	if linked > 0 {
		f.GraphLaunchedKernelRatio = f64(float64(graph) / float64(linked))
	}
	f.MemcpyCount = i64(mc)
	f.MemcpyPerStep = d.perStep(mc)
	f.MemcpyHtoDCount, f.MemcpyDtoHCount, f.MemcpyDtoDCount = i64(htod), i64(dtoh), i64(dtod)
	f.MemcpyPageableCount = i64(pageable)
	f.MemcpyPageableHtoDCount = i64(pageableHtoD)
	f.MemcpyBytes = i64(bytes)
	f.MemcpyTimeRatio = d.ratio(d.clippedUnion(copies))
	d.examples("pageable_memcpy", pageableIdx)
	d.shortKernelExamples(shortIdx)
}

// shortKernelExamples keeps one example of each of the most frequent short
// kernel names (the names that dominate launch overhead).
func (d *deriver) shortKernelExamples(idx []int) {
	evs := d.t.Events
	count := map[trace.Str]int{}
	first := map[trace.Str]int{}
	for _, i := range idx {
		n := evs[i].Name
		if _, ok := first[n]; !ok {
			first[n] = i
		}
		count[n]++
	}
	names := make([]trace.Str, 0, len(count))
	for n := range count {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		if count[names[a]] != count[names[b]] {
			return count[names[a]] > count[names[b]]
		}
		return evs[first[names[a]]].Index < evs[first[names[b]]].Index
	})
	if len(names) > d.cfg.Examples {
		names = names[:d.cfg.Examples]
	}
	var refs []EventRef
	for _, n := range names {
		refs = append(refs, d.ref(&evs[first[n]]))
	}
	if len(refs) > 0 {
		d.f.Examples["short_kernel"] = refs
	}
}

// host derives host sync and DataLoader facts.
func (d *deriver) host() {
	f, evs := d.f, d.t.Events
	type thread struct{ pid, tid trace.ID }
	syncs := map[thread][]int{}
	var dl []interval
	var dlIdx []int
	sawDL, single := false, false
	d.blocking = d.blockingCopies()
	training, compiled := false, false
	for _, i := range d.gpuActs {
		if d.is(&evs[i], kCompiled) {
			compiled = true
			break
		}
	}
	for _, i := range d.rare { // every kind read below is a rareHostKinds kind
		e := &evs[i]
		if !isCPU(e) {
			continue
		}
		if d.is(e, kBackward|kOptimizer) {
			training = true
		}
		if d.is(e, kCompiled) {
			compiled = true
		}
		if d.is(e, kSync) || d.isBlockingCopy(i) {
			k := thread{e.PID, e.TID}
			syncs[k] = append(syncs[k], i)
		}
		if d.is(e, kDataLoader) {
			sawDL = true
			if d.is(e, kDLSingle) {
				single = true
			}
			dl = append(dl, interval{e.TS, e.End()})
			if d.inWindow(e.TS) {
				dlIdx = append(dlIdx, i)
			}
		}
	}
	if sawDL {
		f.DataloaderSingleProcess = &single
	}
	f.HasBackward, f.TorchCompiled = training, compiled
	// Outermost sync events per thread: a sync starting inside another
	// (closed at its end) is part of it (aten::item -> _local_scalar_dense
	// -> cudaStreamSynchronize is one sync).
	keys := make([]thread, 0, len(syncs))
	for k := range syncs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].pid != keys[b].pid {
			return keys[a].pid < keys[b].pid
		}
		return keys[a].tid < keys[b].tid
	})
	// An outermost sync waits on the device when it is, or holds, a
	// runtime call (cudaStreamSynchronize inside aten::item) or a
	// blocking copy; aten::item on a CPU tensor holds neither.
	waits := func(i int) bool { return evs[i].Cat.IsRuntime() || d.isBlockingCopy(i) }
	var outer []int
	var device int64
	for _, k := range keys {
		idx := syncs[k]
		sortByStart(evs, idx)
		end := int64(-1 << 62)
		counted, waited := false, false // the current outermost sync: in W, and waits
		for _, i := range idx {
			e := &evs[i]
			if e.TS <= end {
				if counted && !waited && waits(i) {
					waited = true
					device++
				}
				continue
			}
			end = e.End()
			counted, waited = d.inWindow(e.TS), false
			if counted {
				outer = append(outer, i)
				if waits(i) {
					waited = true
					device++
				}
			}
		}
	}
	f.SyncPerStep = d.perStep(int64(len(outer)))
	if d.hasGPU && len(d.calls) > 0 { // without runtime calls, nothing tells a device sync
		f.DeviceSyncPerStep = d.perStep(device)
	}
	spans := make([]interval, len(outer))
	for k, i := range outer {
		spans[k] = interval{evs[i].TS, evs[i].End()}
	}
	f.SyncTimeRatio = d.ratio(d.clippedUnion(spans))
	d.examples("sync", outer)
	d.hot["sync"] = outer
	if f.HasSteps {
		f.DataloaderTimeRatio = d.ratio(d.clippedUnion(dl))
	}
	d.examples("dataloader", dlIdx)
	d.hot["dataloader"] = dlIdx
}

// blockingCopies returns the cudaMemcpyAsync/hipMemcpyAsync calls whose
// GPU copy (linked by correlation id) reads or writes pageable memory: the
// runtime makes those synchronous, so they are host syncs (docs/ARCHITECTURE.md
// "Why the GPU waits").
func (d *deriver) blockingCopies() map[int]bool {
	evs := d.t.Events
	var out map[int]bool
	for _, i := range d.gpuActs {
		g := &evs[i]
		if g.Cat != trace.CatMemcpy || g.Has&trace.HasCorrelation == 0 || !d.is(g, kPageable) {
			continue
		}
		li, ok := d.launch.get(g.Correlation)
		if !ok || !d.is(&evs[li], kAsyncCopy) {
			continue
		}
		if out == nil {
			out = map[int]bool{}
		}
		out[li] = true
	}
	return out
}

// isBlockingCopy reports whether event i is a launch of a blocking copy
// (see blockingCopies); only async-copy calls can be, so others skip the
// lookup.
func (d *deriver) isBlockingCopy(i int) bool {
	return len(d.blocking) > 0 && d.is(&d.t.Events[i], kAsyncCopy) && d.blocking[i]
}

// sortByStart orders event indexes by start, longer first on ties, then
// file order, so parents precede their children.
func sortByStart(evs []trace.Event, idx []int) {
	slices.SortFunc(idx, func(a, b int) int {
		ea, eb := &evs[a], &evs[b]
		return cmp.Or(cmp.Compare(ea.TS, eb.TS), cmp.Compare(eb.Dur, ea.Dur), cmp.Compare(ea.Index, eb.Index))
	})
}
