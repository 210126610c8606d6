package facts

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// Config holds the thresholds of the core facts. The defaults are
// docs/ARCHITECTURE.md's: short kernel under 10 us (the TensorBoard profiler plugin's
// "kernels < 10 us" split), chain members under 20 us, chains of 3 or more.
// The yaml names are the keys of the facts: section of .stepdoctor.yaml,
// which is decoded over DefaultConfig, so keys left out keep their default.
// A zero field means "the default" (WithDefaults), so a new threshold's
// default must not be zero.
type Config struct {
	ShortKernelNS  int64 `yaml:"short_kernel_ns"`  // a kernel shorter than this is "short" (ns)
	ChainKernelNS  int64 `yaml:"chain_kernel_ns"`  // an elementwise chain member is shorter than this (ns)
	ChainMinLength int   `yaml:"chain_min_length"` // minimal run length that counts as a chain
	Examples       int   `yaml:"examples"`         // example events kept per kind
	// QueuedLatencyNS: queued GPU idle before work that starts within this
	// long after its launch call returned is launch latency, not a
	// dependency wait (ns).
	QueuedLatencyNS int64 `yaml:"queued_latency_ns"`
	// StepMarker marks the steps of a trace without ProfilerStep#N: "" for
	// none (the whole trace is one window), "auto" for the first of
	// AutoMarkers the trace shows, else a regular expression naming the
	// host span (record_function label, operator, python_function frame)
	// of one iteration. The default is "".
	StepMarker string `yaml:"step_marker"`
}

// DefaultConfig returns docs/ARCHITECTURE.md's thresholds, and 50 us of launch latency
// (a few times the 5-20 us from a launch call's return to the kernel's
// start that Nsight Systems shows on an idle device, more on ROCm).
func DefaultConfig() Config {
	return Config{ShortKernelNS: 10_000, ChainKernelNS: 20_000, ChainMinLength: 3, Examples: 5, QueuedLatencyNS: 50_000}
}

// launchNames are the runtime/driver calls that launch a kernel.
var launchNames = map[string]bool{
	"cudaLaunchKernel": true, "cudaLaunchKernelExC": true, "cuLaunchKernel": true,
	"cuLaunchKernelEx": true, "hipLaunchKernel": true, "hipExtModuleLaunchKernel": true,
	"hipModuleLaunchKernel": true,
}

// graphLaunchNames replay a captured CUDA/HIP Graph: one call, many kernels
// sharing its correlation id.
var graphLaunchNames = map[string]bool{
	"cudaGraphLaunch": true, "cudaGraphLaunch_v10000": true, "cuGraphLaunch": true, "hipGraphLaunch": true,
}

// syncNames are host sync points (docs/ARCHITECTURE.md "Facts", sync_per_step, and
// "Why the GPU waits", host syncs): explicit synchronization, the blocking copies (cudaMemcpy,
// hipMemcpy, and hipMemcpyWithStream, which ROCm's .cpu() and .item() use)
// and the aten ops that read a device scalar.
var syncNames = map[string]bool{
	"cudaDeviceSynchronize": true, "cudaStreamSynchronize": true, "cudaEventSynchronize": true,
	"cudaMemcpy": true, "hipDeviceSynchronize": true, "hipStreamSynchronize": true,
	"hipEventSynchronize": true, "hipMemcpy": true, "hipMemcpyWithStream": true,
	"aten::item": true, "aten::_local_scalar_dense": true,
}

// asyncCopyNames are the asynchronous copy calls that the runtime makes
// synchronous when the copy reads or writes pageable host memory (CUDA
// Runtime API, "API synchronization behavior"); docs/ARCHITECTURE.md
// ("Why the GPU waits") counts those as host syncs.
var asyncCopyNames = map[string]bool{"cudaMemcpyAsync": true, "hipMemcpyAsync": true}

// interval is a half-open [s, e) span in nanoseconds.
type interval struct{ s, e int64 }

// deriver holds the per-trace indexes shared by the fact computations.
type deriver struct {
	t   *trace.Trace
	cfg Config
	f   *Facts

	window     []interval // W, sorted, disjoint
	windowNS   int64
	launch     *corrIndex // correlation -> its runtime/driver call
	gpuActs    []int      // indexes of complete GPU activity (kernel, memcpy, memset), any device, file order
	calls      []int      // indexes of complete runtime/driver calls, file order
	rare       []int      // indexes of host events of rareHostKinds, file order
	instants   []int      // indexes of instant events, file order
	hostOps    bool       // the trace has host operators (cpu_op or no category)
	primary    int64
	hasGPU     bool
	chainNS    int64 // summed duration of chain members
	kind       []nameKind
	stepSpan   []interval       // each step's extended span, in step order (W is their union; the last step uncapped)
	stepDur    []int64          // each step's duration for statistics (ns): the last step's GPU tail capped
	busy       ivset            // primary-device GPU activity ∩ W (set by gpu)
	hot        map[string][]int // hot host events by PySite kind (set by gpu, host)
	blocking   map[int]bool     // blocking async copies: host syncs (set by host)
	winHint    int              // the window segment inWindow found last
	shapes     trace.ShapeIndex // Trace.ShapesOf for many lookups
	concurrent bool             // this deriver runs the chains and op tables beside the host passes (see hostAndOpTables)
	oneOff     map[int]bool     // one-off runtime calls in W (set by oneOffCalls)
	oneOffOps  map[thread]ivset // per thread, the union of its one-off operator calls (set by oneOffCalls)

	frames      []int // python_function events by (pid, tid, ts, longer first); see indexFrames
	frameParent []int // per frames entry, its enclosing frame's position, or -1
	framesDone  bool
	annots      []int         // user_annotation events other than steps (see annotations)
	gpuAnnots   []int         // gpu_user_annotation events other than steps (set by annotations)
	copyByCorr  map[int64]int // correlation -> GPU copy (see copyOf)
	topChains   []topChain    // the longest elementwise chains (see keepChain)
	syncSet     ivset         // union of the outermost host syncs (see syncUnion)
	stepIdx     []int         // the ProfilerStep#N (or marker) events, in start order (set by steps)
	ops         *opIndex      // the host operator tree (set by opTables)
	stepPhase   []string      // per step, the phase its marker names (prefill, decode, mixed) or ""; nil for ProfilerStep
	markerIdx   []int         // the automatic marker's spans when they are not the steps (see phaseBreakdown)
	markerPhase []string      // per markerIdx entry, the phase its name says or ""

	repeatedExample []EventRef // Examples["repeated_small_op"], set by repeatedOps
}

// concurrentMinEvents is the smallest trace whose passes run beside each
// other when more than one core is available (see spareCore: the
// record_shapes index beside the first passes, the chains and op tables
// beside the GPU and host passes). Measured, when the op tables alone ran
// beside the breakdown, on the shared traces with 2 cores (best
// of 15-30): from 21,000 events the facts take 0.60-0.85 of the serial
// time (train_resnet18, ResNet50, rank0, df_index_resolver, b200), while
// below 15,000 it is 0.85-1.09 of a few milliseconds (alexnet, DLRM, bert,
// gloo cpu_only, MTIA): no gain worth a goroutine.
var concurrentMinEvents = 20_000

// Derive computes every fact of one trace. It never fails: a fact the trace
// cannot give is left nil.
func Derive(t *trace.Trace, cfg Config) *Facts {
	d := &deriver{t: t, cfg: cfg, hot: map[string][]int{}, f: &Facts{SchemaVersion: SchemaVersion, Examples: map[string][]EventRef{}}}
	d.kind = kinds(t)
	d.capabilities()
	d.indexTimelines()
	// The record_shapes index is first read by batchSize: on a spare core
	// it is built beside the passes before (the launch index, most of
	// their time, faults in its table), and so are the annotation and
	// Python frame indexes, which both pass groups after steps read (built
	// lazily, each group built its own).
	d.maybeBeside(func() {
		d.shapes = t.IndexShapes()
		if d.spareCore() {
			d.annotations()
			d.indexFrames()
		}
	}, func() {
		d.indexLaunches()
		d.primaryDevice()
		d.otherAccelerator()
		d.steps()
	})
	d.hostAndOpTables()
	d.memory()
	d.setup()
	return d.f
}

// hostAndOpTables runs the passes after steps in two groups: the GPU and
// host facts, the breakdown and comm (hostFacts), and the elementwise
// chains and op tables (chainsAndOpTables). The second reads only what the
// passes before steps set, and the first reads nothing the second sets
// (their Facts fields are disjoint; the shared maps, hot and Examples, are
// the first's, repeated_small_op's examples are set here after both), so
// on a trace of concurrentMinEvents or more with two cores or more the
// second runs on a goroutine with a shallow copy of the deriver (its own
// window hint and lazily built indexes) beside the first; what it builds
// for later passes (ops) is taken back. The facts are those of the serial
// order (TestDeriveConcurrent compares both on every shared trace, under
// the race detector in CI).
func (d *deriver) hostAndOpTables() {
	side := d
	if d.spareCore() {
		o := *d
		o.concurrent = true
		side = &o
		beside(side.chainsAndOpTables, d.hostFacts)
		d.ops = side.ops
	} else {
		d.hostFacts()
		d.chainsAndOpTables()
	}
	if side.repeatedExample != nil {
		d.f.Examples["repeated_small_op"] = side.repeatedExample
	}
	d.culpritOps()
}

// hostFacts derives the GPU and host facts, the step breakdown and the
// communication facts.
func (d *deriver) hostFacts() {
	d.gpu()
	d.host()
	d.compiled()
	d.batchSize() // after host: reads the DataLoader fetches it lists
	d.oneOffCalls()
	d.pythonSites(d.hot)
	d.breakdown()
	d.comm()
}

// chainsAndOpTables derives the elementwise chains and the op tables (which
// name the longest chains' operators).
func (d *deriver) chainsAndOpTables() {
	d.chains()
	d.opTables()
}

// spareCore reports whether passes may run beside each other: two cores
// or more and a trace of concurrentMinEvents or more.
func (d *deriver) spareCore() bool {
	return runtime.GOMAXPROCS(0) > 1 && len(d.t.Events) >= concurrentMinEvents
}

// maybeBeside runs side beside main when spareCore, else side then main.
func (d *deriver) maybeBeside(side, main func()) {
	if d.spareCore() {
		beside(side, main)
		return
	}
	side()
	main()
}

// beside runs side on a goroutine while main runs, and returns when both
// have; a panic on the goroutine is raised here, as if side had run here.
func beside(side, main func()) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		side()
	}()
	main()
	if p := <-done; p != nil {
		panic(p)
	}
}

func (d *deriver) capabilities() {
	t, f := d.t, d.f
	f.HasShapes, f.HasStack, f.HasMemory = t.RecordShapes, t.WithStack, t.ProfileMemory
	f.LegacyExport = legacyExport(t)
	if t.Distributed != nil {
		f.Rank, f.WorldSize = t.Distributed.Rank, t.Distributed.WorldSize
	}
}

// legacyExport reports whether the trace is the legacy autograd-profiler
// export (Facts.LegacyExport), from its first events: some on pid "CPU
// functions", none in a Kineto category (events added later, such as an
// annotated copy's, carry categories of their own and do not count).
func legacyExport(t *trace.Trace) bool {
	seen := false
	for i := range min(len(t.Events), 4096) {
		e := &t.Events[i]
		if e.Cat != trace.CatNone && e.Cat != trace.CatOther {
			return false
		}
		if e.Cat == trace.CatNone && t.IDString(e.PID) == "CPU functions" {
			seen = true
		}
	}
	return seen
}

// indexTimelines lists the GPU activity, the runtime calls, the instants
// and the host events of rareHostKinds once, so the facts that need only
// them (a few percent of a trace's events) do not scan the whole store.
//
// The store is read twice, counting and then filling lists of the exact
// size, and with a spare core its two halves are read beside each other.
// Grown by append, the lists' copies and 4 KiB page faults took most of
// the pass: on the 532 MB benchmark trace (1.39M events) 55-75 ms, of
// which the scan is about 10.
func (d *deriver) indexTimelines() {
	evs := d.t.Events
	mid := len(evs)
	if d.spareCore() {
		mid = len(evs) / 2
	}
	var lo, hi timelineCounts
	d.maybeBeside(func() { hi = d.countTimelines(evs[mid:]) }, func() { lo = d.countTimelines(evs[:mid]) })
	d.hostOps = lo.hostOps || hi.hostOps
	lists := d.timelineLists()
	for k, list := range lists {
		*list = make([]int, lo.n[k]+hi.n[k])
	}
	d.maybeBeside(func() { d.fillTimelines(mid, len(evs), lo) }, func() { d.fillTimelines(0, mid, timelineCounts{}) })
}

// Timeline lists: the bit of each in a timeline class (see timelineClass),
// and the index of its list in timelineLists.
const (
	tlGPU     = iota // complete GPU activity: kernel, memcpy, memset (gpuActs)
	tlCall           // complete runtime or driver call (calls)
	tlInstant        // instant event (instants)
	tlRare           // host event of rareHostKinds (rare)
	numTimelines
	tlHostOp = numTimelines // not a list: a host operator (cpu_op or no category), for hostOps
)

// timelineLists are the lists indexTimelines fills, by timeline bit.
func (d *deriver) timelineLists() [numTimelines]*[]int {
	return [numTimelines]*[]int{&d.gpuActs, &d.calls, &d.instants, &d.rare}
}

// timelineCounts counts each list's events in a range of the store (or,
// for fillTimelines, the positions a range starts at in each list).
type timelineCounts struct {
	n       [numTimelines]int
	hostOps bool
}

// timelineClass returns e's timeline classes: bit 1<<tl for each list
// (and tlHostOp) it belongs to.
func (d *deriver) timelineClass(e *trace.Event) uint8 {
	var c uint8
	if e.Ph == trace.PhComplete {
		switch {
		case e.Cat.IsGPUActivity():
			c = 1 << tlGPU
		case e.Cat.IsRuntime():
			c = 1 << tlCall
		}
	}
	switch {
	case e.Ph == trace.PhInstant:
		c |= 1 << tlInstant
	case !isCPU(e):
	case d.is(e, rareHostKinds):
		c |= 1 << tlRare
		fallthrough
	default:
		if e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone {
			c |= 1 << tlHostOp
		}
	}
	return c
}

// countTimelines counts the classes of evs.
func (d *deriver) countTimelines(evs []trace.Event) timelineCounts {
	var n timelineCounts
	for i := range evs {
		c := d.timelineClass(&evs[i])
		for k := range numTimelines {
			n.n[k] += int(c >> k & 1)
		}
		n.hostOps = n.hostOps || c&(1<<tlHostOp) != 0
	}
	return n
}

// fillTimelines writes the indexes of the events from..to-1 into the
// lists, from the positions at.
func (d *deriver) fillTimelines(from, to int, at timelineCounts) {
	evs := d.t.Events
	lists := d.timelineLists()
	pos := at.n
	for i := from; i < to; i++ {
		c := d.timelineClass(&evs[i])
		for k := range numTimelines {
			if c>>k&1 != 0 {
				(*lists[k])[pos[k]] = i
				pos[k]++
			}
		}
	}
}

func (d *deriver) indexLaunches() { d.launch = newCorrIndex(d.t.Events, d.calls) }

// primaryDevice picks the device with the largest summed kernel duration
// over the whole trace (ties: smallest id); without kernels, the largest
// summed memcpy/memset duration.
func (d *deriver) primaryDevice() {
	kern := map[int64]int64{}
	other := map[int64]int64{}
	for _, i := range d.gpuActs {
		e := &d.t.Events[i]
		if e.Cat == trace.CatKernel {
			kern[e.DeviceID()] += e.Dur
		} else {
			other[e.DeviceID()] += e.Dur
		}
	}
	sums := kern
	if len(kern) == 0 {
		sums = other
	}
	if len(sums) == 0 {
		return
	}
	best, bestSum := int64(0), int64(-1)
	for dev, s := range sums {
		if s > bestSum || (s == bestSum && dev < best) {
			best, bestSum = dev, s
		}
	}
	d.hasGPU, d.primary = true, best
	d.f.HasGPU = true
	id := best
	d.f.PrimaryDevice = &id
	d.f.Device = d.deviceProps(best)
	if d.f.Device == nil && len(d.t.Devices) == 0 {
		d.f.Device = d.archFromKernels(best)
	}
	d.f.GPUVendor = d.vendor()
}

// kernelArchs are kernel-name prefixes that name the NVIDIA architecture a
// library kernel targets, newest first, with its compute capability.
// Only Volta and newer: they are what tensor-core advice needs, and an
// older prefix does not bound the device (cuDNN runs maxwell_ kernels on
// Pascal).
var kernelArchs = []struct {
	prefix       string
	major, minor int64
}{
	{"sm100_", 10, 0}, {"sm90_", 9, 0}, {"sm89_", 8, 9}, {"sm86_", 8, 6}, {"sm80_", 8, 0}, {"ampere_", 8, 0},
	{"turing_", 7, 5}, {"sm75_", 7, 5}, {"volta_", 7, 0}, {"sm70_", 7, 0},
}

// archFromKernels bounds the compute capability of device id from the
// names of its kernels (see Device.ComputeFrom), or nil.
func (d *deriver) archFromKernels(id int64) *Device {
	best := -1
	seen := make([]bool, d.t.NumStrs()) // each distinct name is read once
	for _, i := range d.gpuActs {
		e := &d.t.Events[i]
		if e.Cat != trace.CatKernel || seen[e.Name] || e.DeviceID() != id {
			continue
		}
		seen[e.Name] = true
		n := d.t.Name(e)
		n = strings.TrimPrefix(n, "void ")
		for k, a := range kernelArchs {
			if best >= 0 && k >= best {
				break
			}
			if strings.HasPrefix(n, a.prefix) {
				best = k
				break
			}
		}
		if best == 0 {
			break // the newest there is
		}
	}
	if best < 0 {
		return nil
	}
	a := kernelArchs[best]
	major, minor := a.major, a.minor
	return &Device{ID: id, ComputeMajor: &major, ComputeMinor: &minor, ComputeFrom: a.prefix}
}

// vendor names the GPU maker from the device name, else from the runtime
// calls (hip* on ROCm): "nvidia" or "amd".
func (d *deriver) vendor() *string {
	v := ""
	if dev := d.f.Device; dev != nil {
		n := strings.ToLower(dev.Name)
		switch {
		case strings.Contains(n, "amd") || strings.Contains(n, "instinct") || strings.Contains(n, "radeon"):
			v = "amd"
		case strings.Contains(n, "nvidia") || strings.Contains(n, "tesla") || strings.Contains(n, "geforce") || strings.Contains(n, "quadro"):
			v = "nvidia"
		}
	}
	for _, i := range d.calls {
		if v != "" {
			break
		}
		switch n := d.t.Name(&d.t.Events[i]); {
		case strings.HasPrefix(n, "hip"):
			v = "amd"
		case strings.HasPrefix(n, "cuda") || strings.HasPrefix(n, "cu"):
			v = "nvidia"
		}
	}
	if v == "" {
		return nil
	}
	return &v
}

// otherAccelerator names an accelerator whose device events are neither
// CUDA nor ROCm activity (MTIA: mtia_ccp_events, mtia_runtime), so no GPU
// fact describes it.
func (d *deriver) otherAccelerator() {
	none := ""
	d.f.UnsupportedAccelerator = &none
	if d.hasGPU {
		return
	}
	named := false // a string (category names among them) starting with mtia
	for s := range d.t.NumStrs() {
		if len(d.t.Str(trace.Str(s))) >= 4 && strings.EqualFold(d.t.Str(trace.Str(s))[:4], "mtia") {
			named = true
			break
		}
	}
	if !named {
		return
	}
	for i := range d.t.Events {
		e := &d.t.Events[i]
		if e.Cat == trace.CatOther && strings.HasPrefix(strings.ToLower(d.t.Str(e.CatName)), "mtia") {
			v := "MTIA"
			d.f.UnsupportedAccelerator = &v
			return
		}
	}
}

func (d *deriver) deviceProps(id int64) *Device {
	devs := d.t.Devices
	for _, p := range devs {
		if p.ID == id {
			return &Device{ID: id, Name: p.Name, ComputeMajor: p.ComputeMajor, ComputeMinor: p.ComputeMinor, SMCount: p.NumSMs, TotalMemoryBytes: p.TotalGlobalMem}
		}
	}
	if len(devs) == 0 || devs[0].Name == "" {
		return nil
	}
	for _, p := range devs[1:] {
		if p.Name != devs[0].Name {
			return nil
		}
	}
	return &Device{ID: id, Name: devs[0].Name}
}

// isCPU reports whether a complete event is on the host timeline.
func isCPU(e *trace.Event) bool {
	return e.Ph == trace.PhComplete && !e.Cat.IsGPU() && e.Cat != trace.CatTrace
}

// steps finds ProfilerStep#N spans, extends each to the end of the GPU work
// it launched (never past the next step's start) and builds the window W.
func (d *deriver) steps() {
	evs := d.t.Events
	var steps []int
	for _, i := range d.rare {
		e := &evs[i]
		if isCPU(e) && d.is(e, kStep) {
			steps = append(steps, i)
		}
	}
	var phases []string
	if len(steps) > 0 {
		slices.SortFunc(steps, func(a, b int) int {
			return cmp.Or(cmp.Compare(evs[a].TS, evs[b].TS), cmp.Compare(evs[b].Dur, evs[a].Dur), cmp.Compare(evs[a].Index, evs[b].Index))
		})
		steps = outermost(evs, steps)
		d.f.StepMarker = &StepMarker{Source: "profiler_step", Pattern: `^ProfilerStep#\d+$`, Label: "ProfilerStep#N", Steps: len(steps)}
	} else {
		steps, phases = d.markerSteps() // outermost spans, in start order
	}
	if len(steps) == 0 {
		d.noStepWindow()
		return
	}
	d.stepPhase = phases
	d.stepIdx = steps
	starts := make([]int64, len(steps))
	ends := make([]int64, len(steps))
	for k, i := range steps {
		starts[k], ends[k] = evs[i].TS, evs[i].End()
	}
	own := append([]int64(nil), ends...)
	d.stepSpan = d.extendSpans(starts, ends)
	durs := make([]float64, 0, len(steps))
	d.stepDur, d.f.LastStepDrainUS = capLastStep(d.stepSpan, own)
	for _, ns := range d.stepDur {
		durs = append(durs, float64(ns)/1e3)
	}
	d.window = unionOf(slices.Clone(d.stepSpan)) // stepSpan stays in step order
	d.windowNS = ivset(d.window).total()
	d.f.HasSteps = true
	d.f.StepsCount = len(steps)
	d.f.WindowUS = float64(d.windowNS) / 1e3
	d.f.StepTimeUS, d.f.StepTimeCV = stepStats(durs)
	refs := make([]EventRef, 0, len(steps))
	for k, i := range steps {
		r := d.ref(&evs[i])
		r.DurUS = durs[k]
		refs = append(refs, r)
	}
	d.f.Examples["step"] = refs
}

// outermost drops the spans (sorted by start, longer first) that lie inside
// an earlier one: steps partition time, and a ProfilerStep#N nested in
// another, or written twice, would cut the outer step short at its start.
func outermost(evs []trace.Event, spans []int) []int {
	out := spans[:0]
	end := int64(math.MinInt64)
	for _, i := range spans {
		if len(out) > 0 && evs[i].End() <= end {
			continue
		}
		out = append(out, i)
		end = max(end, evs[i].End())
	}
	return out
}

// extendSpans extends host spans (starts in order, ends their own ends,
// overwritten) to the end of the GPU activity launched from inside each
// (matched by correlation id), never past the next span's start, and
// returns them as intervals in the same order.
func (d *deriver) extendSpans(starts, ends []int64) []interval {
	evs := d.t.Events
	own := append([]int64(nil), ends...)
	for _, i := range d.gpuActs {
		g := &evs[i]
		if g.Has&trace.HasCorrelation == 0 {
			continue
		}
		li, ok := d.launch.get(g.Correlation)
		if !ok {
			continue
		}
		lts := evs[li].TS
		k, found := slices.BinarySearch(starts, lts)
		if !found {
			k--
		} else {
			for k+1 < len(starts) && starts[k+1] == lts {
				k++
			}
		}
		if k < 0 || lts >= own[k] {
			continue
		}
		if g.End() > ends[k] {
			ends[k] = g.End()
		}
	}
	out := make([]interval, 0, len(starts))
	for k := range starts {
		if k+1 < len(starts) && ends[k] > starts[k+1] {
			ends[k] = starts[k+1]
		}
		if ends[k] < starts[k] {
			ends[k] = starts[k]
		}
		out = append(out, interval{starts[k], ends[k]})
	}
	return out
}

// capLastStep returns each step's duration for the step statistics and the
// last step's drain cut off, in microseconds (docs/ARCHITECTURE.md "Steps and
// their statistics"). The last step has no successor to bound it, so it can
// absorb the drain of a deep GPU queue: its GPU tail (end past its CPU end)
// is capped at the largest tail of the other steps. A single step keeps its
// tail. spans are the extended steps, own their CPU ends.
func capLastStep(spans []interval, own []int64) ([]int64, *float64) {
	durs := make([]int64, len(spans))
	var maxTail int64
	for k, s := range spans {
		durs[k] = s.e - s.s
		if k < len(spans)-1 {
			maxTail = max(maxTail, s.e-max(own[k], s.s))
		}
	}
	last := len(spans) - 1
	var cut int64
	if last > 0 {
		s := spans[last]
		tail := s.e - max(own[last], s.s)
		cut = max(0, tail-maxTail)
		durs[last] -= cut
	}
	return durs, f64(float64(cut) / 1e3)
}

// noStepWindow sets W to the first start .. last end of the complete
// events (profiler Trace spans excluded).
func (d *deriver) noStepWindow() {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range d.t.Events {
		e := &d.t.Events[i]
		if e.Ph != trace.PhComplete || e.Cat == trace.CatTrace {
			continue
		}
		lo = min(lo, e.TS)
		hi = max(hi, e.End())
	}
	if lo > hi {
		return
	}
	d.window = []interval{{lo, hi}}
	d.windowNS = hi - lo
	d.f.WindowUS = float64(d.windowNS) / 1e3
}

func stepStats(durs []float64) (*StepStats, *float64) {
	n := float64(len(durs))
	sorted := append([]float64(nil), durs...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range durs {
		sum += v
	}
	mean := sum / n
	var ss float64
	for _, v := range durs {
		ss += (v - mean) * (v - mean)
	}
	cv := 0.0
	if mean > 0 {
		cv = math.Sqrt(ss/n) / mean
	}
	return &StepStats{Mean: mean, P50: percentile(sorted, 0.5), P90: percentile(sorted, 0.9), Max: sorted[len(sorted)-1]}, &cv
}

// percentile interpolates linearly between order statistics (numpy's
// default "linear" method) over sorted values.
func percentile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// inWindow reports whether ts lies in W's half-open intervals.
func (d *deriver) inWindow(ts int64) bool {
	w := d.window
	// Most calls fall in the segment the last one found.
	if h := d.winHint; h < len(w) && w[h].s <= ts && ts < w[h].e {
		return true
	}
	lo, hi := 0, len(w)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w[m].e <= ts {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(w) && w[lo].s <= ts {
		d.winHint = lo
		return true
	}
	return false
}

// clippedUnion returns |union(iv) ∩ W| in nanoseconds. Like unionOf, it
// reorders and overwrites iv.
func (d *deriver) clippedUnion(iv []interval) int64 { return overlap(unionOf(iv), d.window) }

func (d *deriver) ratio(ns int64) *float64 {
	if d.windowNS <= 0 {
		return nil
	}
	r := float64(ns) / float64(d.windowNS)
	return &r
}

func (d *deriver) perStep(n int64) *float64 {
	if d.f.StepsCount == 0 {
		return nil
	}
	v := float64(n) / float64(d.f.StepsCount)
	return &v
}

func (d *deriver) ref(e *trace.Event) EventRef {
	off := 0.0
	if len(d.window) > 0 {
		off = float64(e.TS-d.window[0].s) / 1e3
	}
	return EventRef{
		Name:     d.t.Name(e),
		TSUS:     float64(e.TS) / 1e3,
		OffsetUS: off,
		DurUS:    float64(e.Dur) / 1e3,
		PID:      d.t.IDString(e.PID),
		TID:      d.t.IDString(e.TID),
		TSNS:     e.TS,
	}
}

// examples keeps the cfg.Examples longest events (ties: earliest).
func (d *deriver) examples(key string, idx []int) {
	if len(idx) == 0 {
		return
	}
	evs := d.t.Events
	idx = append([]int(nil), idx...)
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(evs[b].Dur, evs[a].Dur), cmp.Compare(evs[a].TS, evs[b].TS))
	})
	if len(idx) > d.cfg.Examples {
		idx = idx[:d.cfg.Examples]
	}
	refs := make([]EventRef, len(idx))
	for k, i := range idx {
		refs[k] = d.ref(&evs[i])
	}
	d.f.Examples[key] = refs
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
