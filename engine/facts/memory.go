package facts

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// MemoryDevice is one device's memory over the trace, from its [memory]
// instant events (profile_memory=True). Bytes; offsets are microseconds
// from the window start (negative before it).
type MemoryDevice struct {
	Device   string `json:"device"`    // "GPU 0", or "CPU"
	DeviceID int64  `json:"device_id"` // args["Device Id"]; -1 for the CPU
	Events   int64  `json:"events"`    // [memory] events of the device
	// AllocatedKnown is false in the 2021 format (Bytes, no Total
	// Allocated): allocated bytes are then the running sum of Bytes,
	// raised so that it never goes below zero, and what was allocated
	// before the trace began is unknown, so every value is a lower bound.
	AllocatedKnown bool `json:"allocated_known"`
	// HasReserved: the events carry a Total Reserved above 0 (the CPU's
	// is always 0: it has no caching allocator).
	HasReserved bool `json:"has_reserved"`
	// PeakAllocatedBytes is the largest allocated value, first reached
	// at PeakOffsetUS by an allocation inside operator PeakOp: the
	// innermost CPU operator enclosing that [memory] event on its
	// thread ("" when none does).
	PeakAllocatedBytes int64   `json:"peak_allocated_bytes"`
	PeakOffsetUS       float64 `json:"peak_offset_us"`
	PeakOp             string  `json:"peak_op"`
	// PeakReservedBytes is Total Reserved at the peak and
	// FragmentationRatio (reserved - allocated) / reserved there: the
	// share of the caching allocator's segments that is cached but not
	// allocated (PyTorch docs, CUDA memory management). MaxReservedBytes
	// is the largest Total Reserved. Null without has_reserved.
	PeakReservedBytes  *int64   `json:"peak_reserved_bytes"`
	FragmentationRatio *float64 `json:"fragmentation_ratio"`
	MaxReservedBytes   *int64   `json:"max_reserved_bytes"`
	// Allocs counts allocations (Bytes > 0) starting in W, AllocsPerStep
	// per step (null without steps).
	Allocs        int64    `json:"allocs"`
	AllocsPerStep *float64 `json:"allocs_per_step"`
	// Curve is allocated and reserved bytes over time, at most
	// 2*memCurveBuckets+2 points: the first and last sample and, per
	// equal slice of time, the lowest and the highest sample, so the peak
	// is kept exactly.
	Curve []MemoryPoint `json:"curve"`
	// Steps holds, per step, its span, allocations and the allocated
	// bytes at its peak and at its end; empty without steps.
	Steps []MemoryStep `json:"steps"`
}

// MemoryPoint is one sample of a memory curve.
type MemoryPoint struct {
	OffsetUS       float64 `json:"offset_us"`
	AllocatedBytes int64   `json:"allocated_bytes"`
	ReservedBytes  int64   `json:"reserved_bytes"` // 0 without has_reserved
}

// MemoryStep is one step of a device's memory: the step's span (as in
// StepBreakdown), its allocations (Bytes > 0), and allocated bytes at the
// highest point within the step and at its end (the last sample before
// the end; 0 when there is none).
type MemoryStep struct {
	Step               string  `json:"step"`
	OffsetUS           float64 `json:"offset_us"`
	DurUS              float64 `json:"dur_us"`
	Allocs             int64   `json:"allocs"`
	PeakAllocatedBytes int64   `json:"peak_allocated_bytes"`
	EndAllocatedBytes  int64   `json:"end_allocated_bytes"`
}

// memCurveBuckets is the number of time slices a memory curve is cut into.
const memCurveBuckets = 150

// memSample is one [memory] event of a device, as read.
type memSample struct {
	ts       int64
	i        int   // index in Trace.Events
	bytes    int64 // args.Bytes
	total    int64 // Total Allocated, -1 when absent
	reserved int64 // Total Reserved, -1 when absent
	dev      int   // position of the device in memory's list while collecting
}

// memDev collects one device's samples.
type memDev struct {
	id      int64
	n       int // samples
	samples []memSample
}

// memory derives the profile_memory facts from the [memory] instant
// events, per device: Device Id (-1 or Device Type 0: the CPU); an event
// with only Device Type (the 2021 format), when not the CPU, counts for
// the primary GPU. Allocated bytes are Total Allocated; in the 2021
// format, which has only Bytes (positive: allocated, negative: freed),
// the running sum of Bytes from the trace's start raised by the least
// amount that keeps it non-negative: a lower bound, as memory allocated
// before the trace began is not seen. The scalar facts describe the
// primary GPU (without GPU activity: the device with the highest peak,
// GPUs before the CPU).
func (d *deriver) memory() {
	if !d.f.HasMemory {
		return
	}
	evs := d.t.Events
	ma := d.t.MemArgs
	var devs []*memDev
	// One flat list, sized by the events that carry MemArgs (the
	// [memory] events and the copies), then grouped by device in file
	// order.
	all := make([]memSample, 0, len(ma))
	j := 0
	for _, i := range d.instants {
		e := &evs[i]
		if e.Ph != trace.PhInstant || e.Has&(trace.HasTotalAllocated|trace.HasBytes) == 0 || d.t.Name(e) != "[memory]" {
			continue
		}
		for j < len(ma) && ma[j].Index < e.Index {
			j++
		}
		s := memSample{ts: e.TS, i: i, total: -1, reserved: -1}
		devType := int32(-1)
		if j < len(ma) && ma[j].Index == e.Index {
			m := &ma[j]
			devType = m.DeviceType
			if m.HasReserved {
				s.reserved = m.TotalReserved
			}
			if e.Has&trace.HasTotalAllocated != 0 {
				s.total = m.TotalAllocated
			}
			if e.Has&trace.HasBytes != 0 {
				s.bytes = m.Bytes
			}
		}
		var id int64
		switch {
		case e.Has&trace.HasDeviceID != 0 && (e.Device < 0 || devType == 0):
			id = -1
		case e.Has&trace.HasDeviceID != 0:
			id = int64(e.Device)
		case devType == 0:
			id = -1
		case devType > 0 && d.hasGPU:
			id = d.primary
		case devType > 0:
			id = 0
		default:
			continue // no device named: not attributable
		}
		k := slices.IndexFunc(devs, func(m *memDev) bool { return m.id == id })
		if k < 0 {
			k = len(devs)
			devs = append(devs, &memDev{id: id})
		}
		s.dev = k
		all = append(all, s)
		devs[k].n++
	}
	// Group by device, keeping file order within each (a counting sort).
	grouped := make([]memSample, len(all))
	next := make([]int, len(devs))
	for k, at := 0, 0; k < len(devs); k++ {
		next[k] = at
		devs[k].samples = grouped[at : at : at+devs[k].n]
		at += devs[k].n
	}
	for _, x := range all {
		grouped[next[x.dev]] = x
		next[x.dev]++
	}
	for _, m := range devs {
		m.samples = m.samples[:m.n]
	}
	if len(devs) == 0 {
		return
	}
	// GPUs by id, then the CPU.
	order := func(id int64) int64 {
		if id < 0 {
			return math.MaxInt64
		}
		return id
	}
	slices.SortFunc(devs, func(a, b *memDev) int { return cmp.Compare(order(a.id), order(b.id)) })
	allocs := make([][]int64, len(devs))
	pick := -1
	for k, m := range devs {
		md, alloc := d.memoryDevice(m)
		d.f.Memory = append(d.f.Memory, md)
		allocs[k] = alloc
		switch {
		case d.hasGPU:
			if m.id == d.primary {
				pick = k
			}
		case pick < 0, devs[pick].id < 0 && m.id >= 0,
			(devs[pick].id < 0) == (m.id < 0) && md.PeakAllocatedBytes > d.f.Memory[pick].PeakAllocatedBytes:
			pick = k
		}
	}
	if pick < 0 {
		return
	}
	primary, primaryAlloc, primarySamples := &d.f.Memory[pick], allocs[pick], devs[pick].samples
	peak := primary.PeakAllocatedBytes
	d.f.MemoryPeakAllocatedBytes = i64(peak)
	total := int64(0)
	if dev := d.f.Device; dev != nil && dev.TotalMemoryBytes != nil && *dev.TotalMemoryBytes > 0 {
		total = *dev.TotalMemoryBytes
		d.f.MemoryPeakRatio = f64(float64(peak) / float64(total))
	}
	d.f.MemoryAllocsPerStep = primary.AllocsPerStep
	if primary.PeakOp != "" {
		op := primary.PeakOp
		d.f.MemoryPeakOp = &op
	}
	if r := primary.PeakReservedBytes; r != nil {
		d.f.MemoryReservedAtPeakBytes = i64(*r)
		d.f.MemoryFragmentationRatio = primary.FragmentationRatio
		if total > 0 {
			d.f.MemoryReservedAtPeakRatio = f64(float64(*r) / float64(total))
		}
	}
	// Allocated bytes at each step's end: the last sample before it.
	var xs, ys []float64
	for k, w := range d.stepSpan {
		if !d.f.HasSteps {
			break
		}
		j, _ := slices.BinarySearchFunc(primarySamples, w.e, func(s memSample, t int64) int { return cmp.Compare(s.ts, t) })
		if j == 0 {
			continue
		}
		xs = append(xs, float64(k))
		ys = append(ys, float64(primaryAlloc[j-1]))
	}
	if len(xs) >= 2 {
		d.f.MemoryGrowthBytesPerStep = f64(slope(xs, ys))
	}
}

// memoryDevice builds the table row of one device and returns its
// allocated bytes after each sample (samples sorted by time on return).
func (d *deriver) memoryDevice(m *memDev) (MemoryDevice, []int64) {
	s := m.samples
	// By time, then file order: samples were appended in file order, and
	// a stable sort is cheap on them (nearly in time order already).
	byTime := func(a, b memSample) int { return cmp.Compare(a.ts, b.ts) }
	if !slices.IsSortedFunc(s, byTime) {
		slices.SortStableFunc(s, byTime)
	}
	md := MemoryDevice{Device: "CPU", DeviceID: m.id, Events: int64(len(s))}
	if m.id >= 0 {
		md.Device = "GPU " + strconv.FormatInt(m.id, 10)
	}
	for _, x := range s {
		md.AllocatedKnown = md.AllocatedKnown || x.total >= 0
		md.HasReserved = md.HasReserved || x.reserved > 0
	}
	alloc := make([]int64, len(s))
	reserved := make([]int64, len(s))
	var run, low, res int64
	for k, x := range s {
		switch {
		case md.AllocatedKnown && x.total >= 0:
			run = x.total
		case !md.AllocatedKnown:
			run += x.bytes
			low = min(low, run)
		}
		if x.reserved >= 0 {
			res = x.reserved
		}
		alloc[k], reserved[k] = run, res
	}
	if low < 0 {
		for k := range alloc {
			alloc[k] -= low
		}
	}
	pk := 0
	for k := range s {
		if alloc[k] > alloc[pk] {
			pk = k
		}
	}
	origin := int64(0)
	if len(d.window) > 0 {
		origin = d.window[0].s
	}
	off := func(ts int64) float64 { return float64(ts-origin) / 1e3 }
	md.PeakAllocatedBytes = alloc[pk]
	md.PeakOffsetUS = off(s[pk].ts)
	if d.ops != nil {
		e := &d.t.Events[s[pk].i]
		if p := d.enclosingOp(d.ops, e.PID, e.TID, e.TS); p >= 0 {
			md.PeakOp = d.t.Name(&d.t.Events[d.ops.ops[p]])
		}
	}
	if md.HasReserved {
		r := reserved[pk]
		md.PeakReservedBytes = i64(r)
		if r > 0 {
			md.FragmentationRatio = f64(float64(max(0, r-alloc[pk])) / float64(r))
		}
		md.MaxReservedBytes = i64(slices.Max(reserved))
	}
	for _, x := range s {
		if x.bytes > 0 && d.inWindow(x.ts) {
			md.Allocs++
		}
	}
	md.AllocsPerStep = d.perStep(md.Allocs)
	for _, k := range curvePoints(s, alloc, memCurveBuckets) {
		md.Curve = append(md.Curve, MemoryPoint{OffsetUS: off(s[k].ts), AllocatedBytes: alloc[k], ReservedBytes: reserved[k]})
	}
	if d.f.HasSteps {
		for k, w := range d.stepSpan {
			a, _ := slices.BinarySearchFunc(s, w.s, func(x memSample, t int64) int { return cmp.Compare(x.ts, t) })
			b, _ := slices.BinarySearchFunc(s, w.e, func(x memSample, t int64) int { return cmp.Compare(x.ts, t) })
			st := MemoryStep{Step: d.t.Name(&d.t.Events[d.stepIdx[k]]), OffsetUS: off(w.s), DurUS: float64(w.e-w.s) / 1e3}
			if a > 0 {
				st.PeakAllocatedBytes = alloc[a-1] // held since before the step
			}
			for q := a; q < b; q++ {
				st.PeakAllocatedBytes = max(st.PeakAllocatedBytes, alloc[q])
				if s[q].bytes > 0 {
					st.Allocs++
				}
			}
			if b > 0 {
				st.EndAllocatedBytes = alloc[b-1]
			}
			md.Steps = append(md.Steps, st)
		}
	}
	return md, alloc
}

// curvePoints picks the samples a curve keeps: the first and the last,
// and in each of n equal slices of the time range the lowest and the
// highest value (earliest on ties), in time order. The global peak is
// the highest of its slice, so it is always kept.
func curvePoints(s []memSample, v []int64, n int) []int {
	if len(s) <= 2*n+2 {
		out := make([]int, len(s))
		for k := range out {
			out[k] = k
		}
		return out
	}
	t0, t1 := s[0].ts, s[len(s)-1].ts
	span := t1 - t0 + 1
	keep := make([]bool, len(s))
	keep[0], keep[len(s)-1] = true, true
	lo, hi, cur := -1, -1, -1
	flush := func() {
		if lo >= 0 {
			keep[lo], keep[hi] = true, true
		}
	}
	for k := range s {
		// The slice of sample k, without overflow for any span.
		b := int((float64(s[k].ts-t0) / float64(span)) * float64(n))
		if b != cur {
			flush()
			cur, lo, hi = b, k, k
			continue
		}
		if v[k] < v[lo] {
			lo = k
		}
		if v[k] > v[hi] {
			hi = k
		}
	}
	flush()
	var out []int
	for k, ok := range keep {
		if ok {
			out = append(out, k)
		}
	}
	return out
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

// gpuActivityMissing sets gpu_activity_missing and its reason: a trace
// without GPU activity that shows a GPU job (kernel launch calls,
// deviceProperties of a CUDA/ROCm device, NCCL collectives on the host) was
// recorded without ProfilerActivity.CUDA, or lost its GPU events. An
// accelerator that is not CUDA or ROCm (MTIA) lists its own
// deviceProperties and is not a GPU job missing its activity.
func (d *deriver) gpuActivityMissing(launches int64) {
	if d.hasGPU || (d.f.UnsupportedAccelerator != nil && *d.f.UnsupportedAccelerator != "") {
		return
	}
	var signs []string
	if launches > 0 {
		signs = append(signs, fmt.Sprintf("%d kernel launch %s", launches, plural(launches, "call", "calls")))
	}
	if devs := d.t.Devices; len(devs) > 0 {
		names := map[string]bool{}
		for _, p := range devs {
			names[p.Name] = true
		}
		gpus := plural(int64(len(devs)), "GPU", "GPUs")
		if len(names) == 1 && devs[0].Name != "" {
			gpus = devs[0].Name + " " + gpus
		}
		signs = append(signs, fmt.Sprintf("%d %s in deviceProperties", len(devs), gpus))
	}
	var nccl int64
	for _, i := range d.rare {
		e := &d.t.Events[i]
		if isCPU(e) && d.is(e, kCommCPU) && strings.HasPrefix(d.t.Name(e), "nccl:") {
			nccl++
		}
	}
	if nccl > 0 {
		signs = append(signs, fmt.Sprintf("%d nccl: collective %s", nccl, plural(nccl, "span", "spans")))
	}
	if di := d.t.Distributed; nccl == 0 && di != nil && strings.EqualFold(di.Backend, "nccl") {
		signs = append(signs, "distributedInfo backend nccl")
	}
	if len(signs) == 0 {
		return
	}
	d.f.GPUActivityMissing = true
	reason := strings.Join(signs, ", ")
	d.f.GPUActivityMissingReason = &reason
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
	d.gpuActivityMissing(launches)
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

// plural is one for n == 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
