package facts

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// Idle-cause indexes into IdleCauses. The host causes (sync .. python) are
// in the priority order of docs/ARCHITECTURE.md "Why the GPU waits" (what T was doing): when several
// events of the thread cover an instant, the first of them takes it.
const (
	causeQueued = iota
	causeLaunch
	causeSync
	causeDataloader
	causeWarmup
	causeRuntime
	causeOptimizer
	causeCPUOp
	causePython
	causeUntraced
	numCauses
	// bucketOneOffOp is not a cause: it totals the part of causeCPUOp
	// spent inside one-off operator calls (see oneOffCalls).
	bucketOneOffOp = numCauses
	numBuckets     = numCauses + 1
)

// firstHostCause is the first cause charged by what the launching thread
// was doing; causes before it come from the gap's next activity.
const firstHostCause = causeSync

// IdleCauses name the causes a GPU idle gap is charged to (docs/ARCHITECTURE.md
// "Why the GPU waits"), in the order of the gpu_idle_*_ratio facts:
// queued (the GPU-side wait: the next work was already issued), launch (the
// launch call of the next work itself), then what the launching thread was
// doing, in priority order, and untraced (nothing recorded on it).
var IdleCauses = []string{"queued", "launch", "sync", "dataloader", "warmup", "runtime", "optimizer", "cpu_op", "python", "untraced"}

// OneOffOpCulprits is the IdleCulprits key of the one-off operator calls
// (gpu_idle_cpu_op_oneoff_ratio's culprits; not a cause).
const OneOffOpCulprits = "cpu_op_oneoff"

// maxCulprits bounds the culprits kept per idle cause; maxCulpritExamples
// the example events of each.
const (
	maxCulprits        = 5
	maxCulpritExamples = 3
)

// Culprit is one named entry of an idle cause: the events of one name that
// the GPU waited on, with the idle time charged to them. For queued the
// name is the next activity's (the kernel or copy the GPU was waiting to
// run); for launch and warmup the launch call's; otherwise the event the
// launching thread was in (the outermost of its cause; for python the
// innermost frame).
type Culprit struct {
	Name   string  `json:"name"`
	Calls  int64   `json:"calls"`   // distinct events charged
	IdleUS float64 `json:"idle_us"` // GPU idle charged to them, microseconds
	// Site is the innermost Python frame outside torch/ and the standard
	// library enclosing the example with most idle, as Kineto names it
	// ("file(line): function"); with_stack traces only.
	Site string `json:"site,omitempty"`
	// Scope is the innermost record_function region enclosing that example
	// (a user_annotation other than ProfilerStep#N).
	Scope string `json:"scope,omitempty"`
	// Op is the outermost CPU operator enclosing that example on its
	// thread, for a runtime call (a launch, an allocator call, a sync):
	// the module-level op of the forward (aten::conv2d), or on the
	// backward thread, which has no Python frames, the autograd node
	// (autograd::engine::evaluate_function: ConvolutionBackward0).
	Op  string `json:"op,omitempty"`
	top int    // event index of Examples[0]
	// Allocator marks an allocator call (cudaMalloc, cudaFree, hipFree,
	// ...): the allocator-churn rule's, not the launch rules'.
	Allocator bool `json:"allocator,omitempty"`
	// Copy and CopyBytes name the GPU copy a blocking copy call waited on
	// ("Memcpy DtoH (Device -> Pageable)") and its size (args.bytes).
	Copy      string `json:"copy,omitempty"`
	CopyBytes int64  `json:"copy_bytes,omitempty"`
	// TopIdleUS is the GPU idle charged to the one event with most
	// (Examples[0]), microseconds: near IdleUS, the name's idle is a
	// one-off (a first allocation, a lazy initialization), not a per-call
	// cost.
	TopIdleUS float64 `json:"top_idle_us"`
	// Launch and LaunchDelayUS, for GPU work the GPU waited to run (cause
	// queued): the runtime call that launched the example with most idle
	// (cudaLaunchKernel, cudaGraphLaunch, hipMemsetAsync ...) and how long
	// after that call returned the work started, microseconds.
	Launch        string  `json:"launch,omitempty"`
	LaunchDelayUS float64 `json:"launch_delay_us,omitempty"`
	// StreamWait and StreamWaitUS, for queued GPU work: the stream-wait
	// call (cudaStreamWaitEvent, hipStreamWaitEvent) the launching thread
	// made last before that launch, with no launch between them, which
	// makes the work's stream wait on an event, and how long before the
	// launch it returned, microseconds.
	StreamWait   string     `json:"stream_wait,omitempty"`
	StreamWaitUS float64    `json:"stream_wait_us,omitempty"`
	Examples     []EventRef `json:"examples,omitempty"` // most idle first
}

// charger accumulates idle time per cause and per culprit name. Charges
// to one event arrive together (gaps in time order; a thread's events of
// one cause do not interleave), so each cause holds its current event and
// folds it into its name's totals when the next event comes: no per-event
// map.
type charger struct {
	totals  [numBuckets]int64
	byName  [numBuckets]map[trace.Str]*nameAgg
	pend    [numBuckets]evCharge // the event being charged (ev -1: none)
	started [numBuckets]bool
	allocNS int64 // part of runtime charged to allocator calls
}

// nameAgg totals the idle charged to the events of one name.
type nameAgg struct {
	ns, calls int64
	top       []evCharge // the maxCulpritExamples events with most time
}

// evCharge is one event's charged time, for picking examples.
type evCharge struct {
	ev   int
	ns   int64
	ts   int64
	name trace.Str
}

func (c *charger) add(cause int, ev evCharge) {
	if ev.ns <= 0 {
		return
	}
	c.totals[cause] += ev.ns
	if ev.ev < 0 {
		return
	}
	if c.started[cause] && c.pend[cause].ev == ev.ev {
		c.pend[cause].ns += ev.ns
		return
	}
	c.flush(cause)
	c.pend[cause], c.started[cause] = ev, true
}

// flush folds the cause's current event into its name's totals.
func (c *charger) flush(cause int) {
	if !c.started[cause] {
		return
	}
	p := c.pend[cause]
	c.started[cause] = false
	if c.byName[cause] == nil {
		c.byName[cause] = map[trace.Str]*nameAgg{}
	}
	a := c.byName[cause][p.name]
	if a == nil {
		a = &nameAgg{}
		c.byName[cause][p.name] = a
	}
	a.ns += p.ns
	a.calls++
	a.top = keepTop(a.top, p, maxCulpritExamples)
}

// done flushes every cause.
func (c *charger) done() {
	for k := range numBuckets {
		c.flush(k)
	}
}

// idleCauses charges every GPU idle gap in W to a cause (docs/ARCHITECTURE.md "Why the GPU waits"):
// through the launch of the activity that ends the gap, to what that
// launching thread was doing. It fills the gpu_idle_*_ratio facts, the
// culprits and the timeline.
func (d *deriver) idleCauses(win ivset) {
	evs := d.t.Events
	gaps := subtract(win, d.busy)

	// The primary device's activity in (ts, file order), and the launches
	// of it in start order (for trailing gaps).
	acts := make([]int, 0, len(d.gpuActs))
	for _, i := range d.gpuActs {
		if evs[i].DeviceID() == d.primary {
			acts = append(acts, i)
		}
	}
	slices.SortStableFunc(acts, func(a, b int) int { return cmp.Compare(evs[a].TS, evs[b].TS) })
	// The launches of that activity in start order, for trailing gaps
	// (few: the ends of W's intervals), built on the first one.
	var launchers []int
	launchersOnce := func() []int {
		if launchers == nil {
			launchers = make([]int, 0, len(acts)) // at most one an activity
			for _, i := range acts {
				if li, ok := d.launchOf(&evs[i]); ok {
					launchers = append(launchers, li)
				}
			}
			slices.SortFunc(launchers, func(a, b int) int { return cmp.Or(cmp.Compare(evs[a].TS, evs[b].TS), cmp.Compare(a, b)) })
			launchers = slices.Compact(launchers)
		}
		return launchers
	}

	var ch charger
	tl := d.newTimeline()
	for _, x := range d.busy {
		tl.add(0, x.s, x.e) // kind 0: busy
	}
	charge := func(cause, ev int, s, e int64) {
		x := evCharge{ev: ev, ns: e - s}
		if ev >= 0 {
			x.ts, x.name = evs[ev].TS, evs[ev].Name
		}
		if cause == causeCPUOp && ev >= 0 && len(d.oneOffOps) > 0 {
			// The part inside a one-off operator call is the cause's time
			// but that call's culprit, not the operators' (see oneOffCalls).
			if in := d.oneOffOps[thread{evs[ev].PID, evs[ev].TID}].clipLen(s, e); in > 0 {
				ch.totals[cause] += in
				x.ns -= in
				ch.add(bucketOneOffOp, evCharge{ev: ev, ns: in, ts: x.ts, name: x.name})
			}
		}
		ch.add(cause, x)
		if cause == causeRuntime && ev >= 0 && d.is(&evs[ev], kAllocator) {
			ch.allocNS += e - s
		}
		tl.add(1+cause, s, e)
	}
	host := map[thread][]interval{} // gap parts charged to what a thread was doing
	// Queued pieces that overlap a host sync, in time order, for
	// queuedWhileSynced (a cursor over the syncs' union: gaps come in time
	// order).
	syncSet := d.syncUnion()
	sj := 0
	var queued []interval
	var leadingNS int64 // queued time before the first GPU activity in W
	var leadGapNS int64 // the gap W begins with, before the first GPU activity
	var latencyNS int64 // queued time of work that started soon after its launch returned
	chargeQueued := func(next int, s, e int64, leading, latency bool) {
		charge(causeQueued, next, s, e)
		for sj < len(syncSet) && syncSet[sj].e <= s {
			sj++
		}
		if sj < len(syncSet) && syncSet[sj].s < e {
			queued = append(queued, interval{s, e})
		}
		if leading {
			leadingNS += e - s
		} else if latency {
			latencyNS += e - s
		}
	}
	winStart := int64(0)
	if len(d.window) > 0 {
		winStart = d.window[0].s
	}
	k := 0 // the first activity starting at or after the gap's end: gaps come in time order
	for gi, g := range gaps {
		a, b := g.s, g.e
		leading := gi == 0 && a == winStart
		if leading {
			leadGapNS = b - a
		}
		for k < len(acts) && evs[acts[k]].TS < b {
			k++
		}
		if k == len(acts) || evs[acts[k]].TS != b || !d.inWindow(b) {
			// Trailing gap: charged wholly to what the thread of the last
			// launch before it was doing.
			launchers := launchersOnce()
			j, _ := slices.BinarySearchFunc(launchers, a, func(i int, ts int64) int { return cmp.Compare(evs[i].TS, ts) })
			if j == 0 {
				charge(causeUntraced, -1, a, b)
				continue
			}
			l := &evs[launchers[j-1]]
			th := thread{l.PID, l.TID}
			host[th] = append(host[th], interval{a, b})
			continue
		}
		next := acts[k]
		li, ok := d.launchOf(&evs[next])
		// Work that starts within QueuedLatencyNS of its launch returning
		// waited on the launch path (driver, doorbell, dispatch), not on a
		// dependency.
		latency := ok && evs[next].TS-evs[li].End() <= d.cfg.QueuedLatencyNS
		if !ok || evs[li].TS < winStart || evs[li].End() <= a {
			chargeQueued(next, a, b, leading, latency)
			continue
		}
		l := &evs[li]
		if hs := min(b, l.TS); hs > a {
			th := thread{l.PID, l.TID}
			host[th] = append(host[th], interval{a, hs})
		}
		launch := causeLaunch
		if d.oneOff[li] {
			launch = causeWarmup
		}
		ls, le := max(a, l.TS), min(b, l.End())
		if le > ls {
			charge(launch, li, ls, le)
		}
		if qs := max(a, l.End()); qs < b {
			chargeQueued(next, qs, b, leading, latency)
		}
	}
	d.chargeHost(host, charge)
	ch.done()

	for k, p := range d.f.idleCauseFields() {
		*p = d.ratio(ch.totals[k])
	}
	d.f.IdleCulprits = d.culprits(&ch)
	if d.hasGPU {
		d.f.GPUIdleCPUOpOneOffRatio = d.ratio(ch.totals[bucketOneOffOp])
	}
	d.f.GPUIdleQueuedLeadingRatio = d.ratio(leadingNS)
	d.f.GPUIdleLeadingRatio = d.ratio(leadGapNS)
	d.f.GPUIdleQueuedLatencyRatio = d.ratio(latencyNS)
	d.f.GPUIdleAllocatorRatio = d.ratio(ch.allocNS)
	d.queuedWhileSynced(ivset(queued))
	d.f.Timeline = tl.spans()
	d.idleExamples()
}

// idleExamples sets Facts.Examples["idle_<cause>"] for each idle cause: the
// event with most charged idle of each of its top culprits, culprit order
// (for queued, the blocking host calls first, then the activities the GPU
// waited to run), and "idle_allocator": the allocator culprits' events.
// Findings on an idle cause carry them (rules "examples:"), so a report or
// an annotated trace can point at the evidence.
func (d *deriver) idleExamples() {
	firsts := func(cs []Culprit, keep func(Culprit) bool) []EventRef {
		var out []EventRef
		for _, c := range cs {
			if len(c.Examples) > 0 && (keep == nil || keep(c)) {
				out = append(out, c.Examples[0])
			}
		}
		return out
	}
	for cause, cs := range d.f.IdleCulprits {
		refs := firsts(cs, nil)
		if cause == IdleCauses[causeQueued] {
			refs = append(firsts(d.f.QueuedSyncCulprits, nil), refs...)
		}
		if len(refs) > 0 {
			d.f.Examples["idle_"+cause] = refs
		}
	}
	if refs := firsts(d.f.IdleCulprits[IdleCauses[causeRuntime]], func(c Culprit) bool { return c.Allocator }); len(refs) > 0 {
		d.f.Examples["idle_allocator"] = refs
	}
	// idle_host: the host work the launching thread did while the GPU
	// waited (launch and runtime calls, CPU operators, Python), the
	// culprits with most idle first: the launch rules' evidence.
	var host []Culprit
	for _, cause := range []int{causeLaunch, causeRuntime, causeCPUOp, causePython} {
		for _, c := range d.f.IdleCulprits[IdleCauses[cause]] {
			if !c.Allocator {
				host = append(host, c)
			}
		}
	}
	slices.SortStableFunc(host, func(a, b Culprit) int { return cmp.Compare(b.IdleUS, a.IdleUS) })
	if refs := firsts(host, nil); len(refs) > 0 {
		d.f.Examples["idle_host"] = refs[:min(len(refs), d.cfg.Examples)]
	}
}

// queuedWhileSynced measures the GPU-side waits during which a host thread
// is blocked in a host sync: both sides wait (a blocking copy or sync
// behind a dependency, or behind work queued before the trace began). It
// sets gpu_idle_queued_sync_ratio and the syncs that overlap most.
func (d *deriver) queuedWhileSynced(queued ivset) {
	evs := d.t.Events
	syncs := d.hot["sync"]
	d.f.GPUIdleQueuedSyncRatio = d.ratio(overlap(queued, d.syncUnion()))
	var ch charger
	for _, i := range syncs {
		ch.add(causeQueued, evCharge{ev: i, ns: queued.clipLen(evs[i].TS, evs[i].End()), ts: evs[i].TS, name: evs[i].Name})
	}
	ch.done()
	d.f.QueuedSyncCulprits = d.culpritList(ch.byName[causeQueued])
}

// launchOf returns the runtime/driver call that launched a GPU activity
// (same correlation id).
func (d *deriver) launchOf(e *trace.Event) (int, bool) {
	if e.Has&trace.HasCorrelation == 0 {
		return 0, false
	}
	return d.launch.get(e.Correlation)
}

// hostCause classifies a host event by what it makes its thread do while
// the GPU waits (docs/ARCHITECTURE.md "Why the GPU waits"), or -1 for events that map to no cause
// (ProfilerStep and other annotations, instants, GPU events).
func (d *deriver) hostCause(i int) int {
	e := &d.t.Events[i]
	switch {
	case !isCPU(e):
		return -1
	case d.is(e, kSync):
		return causeSync
	case d.is(e, kDataLoader):
		return causeDataloader
	case e.Cat.IsRuntime():
		// Blocking copies and one-off calls are runtime calls: look them
		// up only for those.
		switch {
		case d.isBlockingCopy(i):
			return causeSync
		case d.oneOff[i]:
			return causeWarmup
		}
		return causeRuntime
	case d.is(e, kOptimizer):
		return causeOptimizer
	case (e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone) && !d.isAnnotation(e):
		return causeCPUOp
	case e.Cat == trace.CatPythonFunction:
		return causePython
	}
	return -1
}

// chargeHost charges the host-late pieces of the gaps, per launching
// thread, to what the thread was doing: each instant to the first cause,
// in priority order, among the thread's events covering it; untraced where
// none does.
func (d *deriver) chargeHost(host map[thread][]interval, charge func(cause, ev int, s, e int64)) {
	if len(host) == 0 {
		return
	}
	evs := d.t.Events
	threads := make([]thread, 0, len(host))
	for th := range host {
		threads = append(threads, th)
	}
	slices.SortFunc(threads, func(a, b thread) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid)) })
	slot := make(map[thread]int, len(threads))
	for k, th := range threads {
		slot[th] = k
	}
	// Per thread, the time to charge: its gap pieces, merged.
	bases := make([]ivset, len(threads))
	for k, th := range threads {
		pieces := host[th]
		slices.SortFunc(pieces, func(a, b interval) int { return cmp.Compare(a.s, b.s) })
		base := make(ivset, 0, len(pieces))
		for _, p := range pieces {
			base = mergeNext(base, p)
		}
		bases[k] = base
	}
	// Per thread and host cause, the events that overlap the thread's
	// pieces (the others cannot be charged, nor can their children, which
	// lie inside them).
	byCause := make([][][]int, len(threads))
	for k := range byCause {
		byCause[k] = make([][]int, numCauses)
	}
	// A thread's events come in start order (Kineto 2.x) or in end order
	// (the 2020-2021 exporter): a cursor per thread into its pieces, on
	// starts or on ends, answers the overlap test; a binary search when an
	// event is out of both orders. With pieces sorted and disjoint, [s, e)
	// overlaps one iff the last piece starting before e ends after s.
	type cur struct {
		j     int   // pieces starting before prevE
		prevE int64 // the previous event's end
	}
	cursors := make([]cur, len(threads))
	overlaps := func(k int, s, e int64) bool {
		b, c := bases[k], &cursors[k]
		j := c.j
		if e < c.prevE {
			j, _ = slices.BinarySearchFunc(b, e, func(x interval, t int64) int { return cmp.Compare(x.s, t) })
		}
		for j < len(b) && b[j].s < e {
			j++
		}
		c.j, c.prevE = j, e
		return j > 0 && b[j-1].e > s
	}
	last, lastSlot := thread{-1, -1}, -1
	slotOf := func(e *trace.Event) int {
		if th := (thread{e.PID, e.TID}); th != last {
			last, lastSlot = th, -1
			if k, ok := slot[th]; ok {
				lastSlot = k
			}
		}
		return lastSlot
	}
	// Each event's cause (plus one; 0 for none) and the count per thread
	// and cause, then the lists at their sizes: appending to them as they
	// grew allocated about five times their size.
	causeOf := make([]uint8, len(evs))
	count := make([][numCauses]int, len(threads))
	for i := range evs {
		e := &evs[i]
		if e.Ph != trace.PhComplete || e.Cat.IsGPU() {
			continue
		}
		k := slotOf(e)
		if k < 0 || !overlaps(k, e.TS, e.End()) {
			continue
		}
		if c := d.hostCause(i); c >= 0 {
			causeOf[i] = uint8(c) + 1
			count[k][c]++
		}
	}
	for k := range byCause {
		for c, n := range count[k] {
			byCause[k][c] = make([]int, 0, n)
		}
	}
	last, lastSlot = thread{-1, -1}, -1
	for i, c := range causeOf {
		if c > 0 {
			k := slotOf(&evs[i])
			byCause[k][c-1] = append(byCause[k][c-1], i)
		}
	}
	for k := range threads {
		base := bases[k]
		roles := make([]ivset, 0, numCauses-firstHostCause)
		tags := make([][]tagged, 0, numCauses-firstHostCause)
		for c := firstHostCause; c < causeUntraced; c++ {
			idx := byCause[k][c]
			t := tagSegments(evs, idx, c == causePython)
			iv := make([]interval, len(t))
			for j, s := range t {
				iv[j] = interval{s.s, s.e}
			}
			roles = append(roles, unionOf(iv))
			tags = append(tags, t)
		}
		at := make([]int, len(tags))
		partition(base, roles, func(owner int, s, e int64) {
			if owner < 0 {
				charge(causeUntraced, -1, s, e)
				return
			}
			cause := firstHostCause + owner
			// Split the piece among the tagged segments it covers; a part
			// no segment tags (partly overlapping events) keeps no culprit.
			t := tags[owner]
			j := at[owner]
			for j < len(t) && t[j].e <= s {
				j++
			}
			at[owner] = j
			p := s
			for ; j < len(t) && t[j].s < e; j++ {
				ss, se := max(p, t[j].s), min(e, t[j].e)
				if ss > p {
					charge(cause, -1, p, ss)
				}
				if se > ss {
					charge(cause, t[j].ev, ss, se)
					p = se
				}
			}
			if p < e {
				charge(cause, -1, p, e)
			}
		})
	}
}

// tagged is a piece of a thread's timeline covered by one cause, with the
// event it is charged to.
type tagged struct {
	s, e int64
	ev   int
}

// tagSegments splits the time covered by the events idx (one thread) into
// disjoint segments, in time order, each tagged with the outermost event
// covering it, or the innermost when innermost is set. A child that
// outlasts its parent is cut at the parent's end.
//
// Events in start order (Kineto 2.x) are swept forward; events in end order
// (the 2020-2021 exporter wrote each operator when it returned) are swept
// backward, on mirrored time, so neither needs a sort.
func tagSegments(evs []trace.Event, idx []int, innermost bool) []tagged {
	if len(idx) == 0 {
		return nil
	}
	mirror := orderForSweep(evs, idx)
	span := func(i int) (int64, int64) {
		e := &evs[i]
		if mirror {
			return -e.End(), -e.TS
		}
		return e.TS, e.End()
	}
	type open struct {
		ev  int
		end int64
	}
	var out []tagged
	var stack []open
	t := int64(0)
	emit := func(upto int64) {
		if len(stack) == 0 || upto <= t {
			return
		}
		o := stack[0]
		if innermost {
			o = stack[len(stack)-1]
		}
		if n := len(out); n > 0 && out[n-1].ev == o.ev && out[n-1].e == t {
			out[n-1].e = upto
		} else {
			out = append(out, tagged{t, upto, o.ev})
		}
		t = upto
	}
	pop := func(until int64) {
		for len(stack) > 0 && stack[len(stack)-1].end <= until {
			emit(stack[len(stack)-1].end)
			stack = stack[:len(stack)-1]
		}
	}
	for _, i := range idx {
		s, e := span(i)
		pop(s)
		if len(stack) == 0 {
			t = s
		} else {
			emit(s)
		}
		end := e
		if len(stack) > 0 {
			end = min(end, stack[len(stack)-1].end)
		}
		if end > s {
			stack = append(stack, open{i, end})
		}
	}
	pop(int64(1<<63 - 1))
	if mirror {
		slices.Reverse(out)
		for k := range out {
			out[k].s, out[k].e = -out[k].e, -out[k].s
		}
	}
	return out
}

// culprits turns the charged events into the top entries per cause.
func (d *deriver) culprits(ch *charger) map[string][]Culprit {
	out := map[string][]Culprit{}
	for c := range numCauses {
		if list := d.culpritList(ch.byName[c]); len(list) > 0 {
			out[IdleCauses[c]] = list
		}
	}
	if list := d.culpritList(ch.byName[bucketOneOffOp]); len(list) > 0 {
		out[OneOffOpCulprits] = list
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// culpritList keeps the top maxCulprits names, most idle first, each with
// its examples (the events with most charged time), user Python frame and
// record_function scope.
func (d *deriver) culpritList(byName map[trace.Str]*nameAgg) []Culprit {
	if len(byName) == 0 {
		return nil
	}
	evs := d.t.Events
	list := make([]Culprit, 0, len(byName))
	keep := make(map[string][]evCharge, len(byName))
	for n, a := range byName {
		name := d.t.Str(n)
		list = append(list, Culprit{Name: name, Calls: a.calls, IdleUS: float64(a.ns) / 1e3})
		keep[name] = a.top
	}
	slices.SortFunc(list, func(a, b Culprit) int { return cmp.Or(cmp.Compare(b.IdleUS, a.IdleUS), cmp.Compare(a.Name, b.Name)) })
	if len(list) > maxCulprits {
		list = list[:maxCulprits]
	}
	for k := range list {
		top := keep[list[k].Name]
		for _, x := range top {
			list[k].Examples = append(list[k].Examples, d.ref(&evs[x.ev]))
		}
		first := top[0].ev
		list[k].top = first
		list[k].TopIdleUS = float64(top[0].ns) / 1e3
		if g := &evs[first]; g.Cat.IsGPUActivity() {
			if li, ok := d.launchOf(g); ok {
				list[k].Launch = d.t.Name(&evs[li])
				list[k].LaunchDelayUS = float64(max(0, g.TS-evs[li].End())) / 1e3
				if w, ok := d.streamWaitBefore(li); ok {
					list[k].StreamWait = d.t.Name(&evs[w])
					list[k].StreamWaitUS = float64(max(0, evs[li].TS-evs[w].End())) / 1e3
				}
			}
		}
		list[k].Allocator = d.is(&evs[first], kAllocator)
		list[k].Site = d.userFrame(first)
		list[k].Scope = d.scopeOf(first)
		if g, ok := d.copyOf(first); ok {
			list[k].Copy = d.t.Name(&evs[g])
			list[k].CopyBytes, _ = d.t.BytesOf(&evs[g])
		}
	}
	return list
}

// streamWaitNames make a stream wait on an event recorded elsewhere.
var streamWaitNames = map[string]bool{"cudaStreamWaitEvent": true, "hipStreamWaitEvent": true, "cuStreamWaitEvent": true}

// streamWaitBefore returns the stream-wait call the thread of launch call
// li returned from last before li started, when no other launch call
// came between them (a wait applies to the next work enqueued on its
// stream).
func (d *deriver) streamWaitBefore(li int) (int, bool) {
	evs := d.t.Events
	l := &evs[li]
	w, lastLaunch := -1, int64(math.MinInt64)
	for _, i := range d.calls {
		e := &evs[i]
		if e.PID != l.PID || e.TID != l.TID || i == li || e.TS >= l.TS {
			continue
		}
		switch {
		case d.is(e, kLaunch|kGraphLaunch):
			lastLaunch = max(lastLaunch, e.TS)
		case e.End() <= l.TS && streamWaitNames[d.t.Name(e)] && (w < 0 || e.End() > evs[w].End()):
			w = i
		}
	}
	if w < 0 || lastLaunch >= evs[w].End() {
		return -1, false
	}
	return w, true
}

// culpritOps names, for each runtime-call culprit, the outermost operator
// around its top example (Culprit.Op). It runs once the operator tree is
// built: the idle causes may be derived beside it.
func (d *deriver) culpritOps() {
	x := d.ops
	if x == nil {
		return
	}
	evs := d.t.Events
	for _, list := range d.f.IdleCulprits {
		for k := range list {
			e := &evs[list[k].top]
			if !e.Cat.IsRuntime() {
				continue
			}
			p := d.enclosingOp(x, e.PID, e.TID, e.TS)
			if p < 0 {
				continue
			}
			for x.parent[p] >= 0 {
				p = x.parent[p]
			}
			list[k].Op = d.t.Name(&evs[x.ops[p]])
		}
	}
}

// keepTop inserts x into top (most time first, ties: earliest), keeping n.
func keepTop(top []evCharge, x evCharge, n int) []evCharge {
	j := len(top)
	for j > 0 && (x.ns > top[j-1].ns || x.ns == top[j-1].ns && x.ts < top[j-1].ts) {
		j--
	}
	if j >= n {
		return top
	}
	if len(top) < n {
		top = append(top, evCharge{})
	}
	copy(top[j+1:], top[j:])
	top[j] = x
	return top
}

// scopeOf returns the innermost record_function region (a user_annotation
// other than ProfilerStep#N) enclosing event i on its thread, or "".
func (d *deriver) scopeOf(i int) string {
	evs := d.t.Events
	e := &evs[i]
	best := -1
	for _, j := range d.annotations() {
		a := &evs[j]
		if a.PID != e.PID || a.TID != e.TID || a.TS > e.TS || a.End() < e.End() || j == i {
			continue
		}
		if best < 0 || a.Dur < evs[best].Dur {
			best = j
		}
	}
	if best < 0 {
		return ""
	}
	return d.t.Name(&evs[best])
}

// annotations lists the user_annotation events that are not steps, once,
// and their GPU-side copies (gpu_user_annotation, see gpuAnnots) in the
// same pass.
func (d *deriver) annotations() []int {
	if d.annots == nil {
		d.annots = []int{}
		for i := range d.t.Events {
			e := &d.t.Events[i]
			if e.Ph != trace.PhComplete || d.is(e, kStep) {
				continue
			}
			switch e.Cat {
			case trace.CatUserAnnotation:
				d.annots = append(d.annots, i)
			case trace.CatGPUUserAnnotation:
				d.gpuAnnots = append(d.gpuAnnots, i)
			}
		}
	}
	return d.annots
}

// copyOf returns the GPU copy launched by runtime call i (same
// correlation id), for naming the direction and size of a blocking copy.
func (d *deriver) copyOf(i int) (int, bool) {
	e := &d.t.Events[i]
	if !e.Cat.IsRuntime() || e.Has&trace.HasCorrelation == 0 || !d.is(e, kAsyncCopy|kSync) {
		return 0, false
	}
	if d.copyByCorr == nil {
		d.copyByCorr = map[int64]int{}
		for _, g := range d.gpuActs {
			ge := &d.t.Events[g]
			if ge.Cat == trace.CatMemcpy && ge.Has&trace.HasCorrelation != 0 {
				if _, seen := d.copyByCorr[ge.Correlation]; !seen {
					d.copyByCorr[ge.Correlation] = g
				}
			}
		}
	}
	g, ok := d.copyByCorr[e.Correlation]
	return g, ok
}

// oneOffCalls finds the one-off runtime/driver calls in W
// (docs/ARCHITECTURE.md "One-off calls"): not a sync, lasting at least 20x
// the median of the calls of its name in W (or the only call of its name)
// and at least 50 ms or 5% of |W|, with every such slow call of its name
// in one step. It sets warmup_ratio (null without GPU activity, like the
// idle causes).
//
// It also finds the one-off operators, by the same test with no host sync
// inside, but for the only call of a name, with a floor of 50 ms or 1% of
// |W|, and under the runtime calls' floor only for the first call of its
// name and shapes: the first allocation under an aten::to, cuDNN
// autotuning in the first convolution, a first GEMM shape choosing its
// cuBLAS algorithm. They are not in warmup_ratio (a runtime-call fact); the
// GPU idle charged to CPU operators inside them is
// gpu_idle_cpu_op_oneoff_ratio (see idleCauses).
func (d *deriver) oneOffCalls() {
	if d.windowNS <= 0 {
		return
	}
	evs := d.t.Events
	minNS := min(int64(oneOffMinNS), d.windowNS/20)
	// An operator's set-up (the first call of a GEMM shape choosing its
	// cuBLAS algorithm, a first allocation) is milliseconds, not the tens
	// of milliseconds of context creation: the floor for operators is 1%
	// of |W|. The 20x-median test and the one-step test stay.
	minOpNS := min(int64(oneOffMinNS), d.windowNS/oneOffOpWindowShare)
	syncs := d.syncUnion()
	counted := func(i int) bool {
		e := &evs[i]
		if !isCPU(e) || !d.inWindow(e.TS) {
			return false
		}
		if e.Cat.IsRuntime() {
			return !d.is(e, kSync) && !d.isBlockingCopy(i)
		}
		// An operator that waits in a host sync is slow for the GPU, not
		// for warming up.
		return d.isOp(e) && syncs.clipLen(e.TS, e.End()) == 0
	}
	// Only names with a call of at least minNS can have a one-off: find
	// them first, then collect just their calls for the median. Runtime
	// calls are listed; operators are found in one scan of the store.
	slowName := map[trace.Str]bool{}
	for _, i := range d.calls {
		if e := &evs[i]; e.Dur >= minNS && counted(i) {
			slowName[e.Name] = true
		}
	}
	slowOp := map[trace.Str]bool{}
	if d.hostOps {
		for i := range evs {
			if e := &evs[i]; e.Dur >= minOpNS && !e.Cat.IsRuntime() && counted(i) {
				slowOp[e.Name] = true
			}
		}
	}
	if len(slowName) == 0 && len(slowOp) == 0 {
		if d.hasGPU {
			d.f.WarmupRatio = f64(0)
		}
		return
	}
	byName := map[trace.Str][]int{}
	for _, i := range d.calls {
		if e := &evs[i]; slowName[e.Name] && counted(i) {
			byName[e.Name] = append(byName[e.Name], i)
		}
	}
	byOp := map[trace.Str][]int{}
	if len(slowOp) > 0 {
		for i := range evs {
			if e := &evs[i]; slowOp[e.Name] && d.isOp(e) && d.inWindow(e.TS) {
				byOp[e.Name] = append(byOp[e.Name], i)
			}
		}
	}
	var spans []interval
	mark := func(idx []int, op bool) {
		durs := make([]float64, len(idx))
		for k, i := range idx {
			durs[k] = float64(evs[i].Dur)
		}
		slices.Sort(durs)
		med := percentile(durs, 0.5)
		floor := minNS
		var first map[trace.Str]int64 // an operator's first call per recorded shapes
		if op {
			floor = minOpNS
			first = map[trace.Str]int64{}
			for _, i := range idx {
				k := d.shapeKey(i)
				if t, ok := first[k]; !ok || evs[i].TS < t {
					first[k] = evs[i].TS
				}
			}
		}
		var slow []int
		for _, i := range idx {
			dur := evs[i].Dur
			if (!op && len(idx) == 1 || float64(dur) >= oneOffOverMedian*med) && dur >= floor && counted(i) {
				// Below the 50 ms floor an operator is set-up only as the
				// first call of its name and shapes: a slow call later on
				// is a stall, not a warm-up.
				if op && dur < minNS && first[d.shapeKey(i)] != evs[i].TS {
					continue
				}
				slow = append(slow, i)
			}
		}
		if len(slow) == 0 {
			return
		}
		step := d.stepOf(evs[slow[0]].TS)
		for _, i := range slow[1:] {
			if d.stepOf(evs[i].TS) != step {
				return
			}
		}
		for _, i := range slow {
			e := &evs[i]
			if op {
				if d.oneOffOps == nil {
					d.oneOffOps = map[thread]ivset{}
				}
				th := thread{e.PID, e.TID}
				d.oneOffOps[th] = append(d.oneOffOps[th], interval{e.TS, e.End()})
				continue
			}
			if d.oneOff == nil {
				d.oneOff = map[int]bool{}
			}
			d.oneOff[i] = true
			spans = append(spans, interval{e.TS, e.End()})
		}
	}
	for _, idx := range byName {
		mark(idx, false)
	}
	for _, idx := range byOp {
		// No "only call" here: an operator called once is how the step
		// runs, not a warm-up (and with two calls the median is their mean,
		// so neither is 20x it).
		mark(idx, true)
	}
	for th, iv := range d.oneOffOps {
		d.oneOffOps[th] = unionOf(iv)
	}
	if d.hasGPU {
		d.f.WarmupRatio = d.ratio(d.clippedUnion(spans))
	}
}

// shapeKey is the record_shapes text of event i's input dims (0 without
// record_shapes): calls of one operator name with one key run the same
// kernels.
func (d *deriver) shapeKey(i int) trace.Str {
	if sh, ok := d.t.ShapesOf(&d.t.Events[i]); ok {
		return sh.Dims
	}
	return 0
}

// One-off thresholds (docs/ARCHITECTURE.md "One-off calls"): 20x the median of the name's calls,
// and 50 ms or 5% of |W| (operators: 50 ms or 1% of |W|).
const (
	oneOffOverMedian    = 20
	oneOffMinNS         = 50_000_000
	oneOffOpWindowShare = 100 // operators: 1% of |W|
)

// stepOf returns the index of the step whose span holds ts (0 without
// steps; -1 outside every step).
func (d *deriver) stepOf(ts int64) int {
	if len(d.stepSpan) == 0 {
		return 0
	}
	k, _ := slices.BinarySearchFunc(d.stepSpan, ts, func(s interval, t int64) int {
		if s.e <= t {
			return -1
		}
		if s.s > t {
			return 1
		}
		return 0
	})
	if k < len(d.stepSpan) && d.stepSpan[k].s <= ts && ts < d.stepSpan[k].e {
		return k
	}
	return -1
}

// userFrame returns the innermost Python frame enclosing event i on its
// thread that is not in torch/ or the standard library, or "".
func (d *deriver) userFrame(i int) string {
	d.indexFrames()
	evs := d.t.Events
	e := &evs[i]
	fr := d.frames
	k, _ := slices.BinarySearchFunc(fr, e, func(f int, t *trace.Event) int {
		fe := &evs[f]
		return cmp.Or(cmp.Compare(fe.PID, t.PID), cmp.Compare(fe.TID, t.TID), cmp.Compare(fe.TS, t.TS+1))
	})
	for k--; k >= 0; k = d.frameParent[k] {
		f := &evs[fr[k]]
		if f.PID != e.PID || f.TID != e.TID {
			return ""
		}
		if f.End() < e.End() {
			continue
		}
		name := d.t.Name(f)
		if m := pyFrame.FindStringSubmatch(name); m != nil && isUserFile(m[1]) {
			return name
		}
	}
	return ""
}

// isUserFile reports whether a Python source path is the user's: not in
// torch/ and not in the standard library.
func isUserFile(path string) bool {
	p := strings.ReplaceAll(path, "\\", "/")
	switch {
	case strings.HasPrefix(p, "<"): // <frozen ...>, <string>
		return false
	case strings.Contains(p, "/torch/") || strings.HasPrefix(p, "torch/"):
		return false
	case strings.Contains(p, "site-packages/") || strings.Contains(p, "dist-packages/"):
		return true
	case strings.Contains(p, "/lib/python3") || strings.Contains(p, "/lib/python2"):
		return false
	}
	return true
}

// orderForSweep orders event indexes for tagSegments' sweep: by start,
// longer first, then file order; or, for mirror, by end descending, longer
// first, then file order reversed (the same order on mirrored time). Events
// of one thread come in start order or in end order; those are put in order
// in place (only runs of equal times are sorted), and other orders sorted.
func orderForSweep(evs []trace.Event, idx []int) (mirror bool) {
	byStart, byEnd := true, true
	for k := 1; k < len(idx) && (byStart || byEnd); k++ {
		a, b := &evs[idx[k-1]], &evs[idx[k]]
		byStart = byStart && a.TS <= b.TS
		byEnd = byEnd && a.End() <= b.End()
	}
	if !byStart && byEnd {
		slices.Reverse(idx)
	} else if !byStart {
		sortByStart(evs, idx)
		return false
	}
	key := func(i int) int64 {
		if !byStart {
			return -evs[i].End()
		}
		return evs[i].TS
	}
	tie := func(a, b int) int {
		ea, eb := &evs[a], &evs[b]
		if !byStart {
			return cmp.Or(cmp.Compare(eb.Dur, ea.Dur), cmp.Compare(eb.Index, ea.Index))
		}
		return cmp.Or(cmp.Compare(eb.Dur, ea.Dur), cmp.Compare(ea.Index, eb.Index))
	}
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && key(idx[hi]) == key(idx[lo]) {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(idx[lo:hi], tie)
		}
		lo = hi
	}
	return !byStart
}

// syncUnion is the union of the outermost host syncs in W (set by host).
func (d *deriver) syncUnion() ivset {
	if d.syncSet == nil {
		evs := d.t.Events
		syncs := d.hot["sync"]
		iv := make([]interval, len(syncs))
		for k, i := range syncs {
			iv[k] = interval{evs[i].TS, evs[i].End()}
		}
		d.syncSet = unionOf(iv)
		if d.syncSet == nil {
			d.syncSet = ivset{}
		}
	}
	return d.syncSet
}
