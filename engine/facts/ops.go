package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// opIndex is the host operator tree: every CPU operator (cpu_op, Operator,
// legacy no-category) with its parent on the same thread, and kernels
// attributed to the operator that launched them.
type opIndex struct {
	ops      []int // event indexes, by thread (pid, tid), then (start, longer first)
	parent   []int // position in ops of the enclosing operator, -1 for top level
	selfNS   []int64
	devSelf  []int64 // kernel time launched directly by the op
	devTotal []int64 // ... by the op or its descendants
	byThread map[thread][2]int
	ext      []extPos // External id -> position, sorted by id (first op wins)
	// extTable is ext as a table when the ids are dense (Kineto numbers
	// them from a counter): position+1 at id-extBase, 0 for none.
	extTable []int32
	extBase  int64
}

// insideSameName reports whether op p runs inside another call of the
// same operator on its thread (an aten::copy_ converting dtype inside an
// aten::copy_): its time is already in that call's total.
func (x *opIndex) insideSameName(evs []trace.Event, p int) bool {
	name := evs[x.ops[p]].Name
	for q := x.parent[p]; q >= 0; q = x.parent[q] {
		if evs[x.ops[q]].Name == name {
			return true
		}
	}
	return false
}

// extPos maps an External id to an op's position in opIndex.ops.
type extPos struct {
	ext int64
	pos int
}

// byExt returns the position of the op with External id ext.
func (x *opIndex) byExt(ext int64) (int, bool) {
	if x.extTable != nil {
		if k := uint64(ext - x.extBase); k < uint64(len(x.extTable)) && x.extTable[k] > 0 {
			return int(x.extTable[k]) - 1, true
		}
		return 0, false
	}
	k, ok := slices.BinarySearchFunc(x.ext, ext, func(e extPos, t int64) int { return cmp.Compare(e.ext, t) })
	if !ok {
		return 0, false
	}
	return x.ext[k].pos, true
}

// extSpan is the range and count of the ops' External ids, which size
// the External id index before it is filled.
type extSpan struct {
	lo, hi int64
	n      int
}

func (s *extSpan) add(id int64) {
	if s.n == 0 {
		s.lo, s.hi = id, id
	}
	s.lo, s.hi, s.n = min(s.lo, id), max(s.hi, id), s.n+1
}

// newExtIndex starts x's External id index for the ids in span: a table
// when they span at most a few times their number (Kineto numbers them
// from a counter), else pairs that finishExt sorts. addExt fills it; in
// both the first op (in x.ops order) with an id wins.
func (x *opIndex) newExtIndex(span extSpan) {
	if span.n == 0 {
		return
	}
	if w := uint64(span.hi - span.lo); w < uint64(4*span.n+1024) && len(x.ops) < 1<<31-1 {
		x.extTable, x.extBase = hugemem.Make[int32](int(w)+1, int(w)+1), span.lo
		return
	}
	x.ext = hugemem.Make[extPos](0, span.n)
}

// addExt indexes the op at pos by its External id.
func (x *opIndex) addExt(id int64, pos int) {
	if x.extTable != nil {
		if k := id - x.extBase; x.extTable[k] == 0 {
			x.extTable[k] = int32(pos) + 1
		}
		return
	}
	x.ext = append(x.ext, extPos{id, pos})
}

// finishExt sorts the pairs (a table needs nothing more).
func (x *opIndex) finishExt() {
	slices.SortStableFunc(x.ext, func(a, b extPos) int { return cmp.Compare(a.ext, b.ext) })
	x.ext = slices.CompactFunc(x.ext, func(a, b extPos) bool { return a.ext == b.ext })
}

// isOp reports whether a CPU event is an operator of the op table.
func (d *deriver) isOp(e *trace.Event) bool {
	return e.Ph == trace.PhComplete && (e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone) && !d.is(e, kStep) && !d.isAnnotation(e)
}

func (d *deriver) buildOps() *opIndex {
	evs := d.t.Events
	ops, span := d.opOrder()
	n := len(ops)
	x := &opIndex{ops: ops, parent: hugemem.Make[int](n, n), selfNS: hugemem.Make[int64](n, n), byThread: map[thread][2]int{}}
	x.newExtIndex(span)
	var stack []int
	start := 0
	for pos, i := range ops {
		e := &evs[i]
		if pos > 0 {
			if prev := &evs[ops[pos-1]]; prev.PID != e.PID || prev.TID != e.TID {
				x.byThread[thread{prev.PID, prev.TID}] = [2]int{start, pos}
				start, stack = pos, stack[:0]
			}
		}
		// Pop parents that ended before e starts; improper overlaps
		// (python_function vs cpu_op rounding) nest by start.
		for len(stack) > 0 && evs[ops[stack[len(stack)-1]]].End() <= e.TS {
			stack = stack[:len(stack)-1]
		}
		parent := -1
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		x.parent[pos] = parent
		x.selfNS[pos] = e.Dur
		if parent >= 0 {
			p := &evs[ops[parent]]
			x.selfNS[parent] -= min(e.End(), p.End()) - e.TS
		}
		stack = append(stack, pos)
		if e.Has&trace.HasExternalID != 0 {
			x.addExt(e.ExternalID, pos)
		}
	}
	if n > 0 {
		last := &evs[ops[n-1]]
		x.byThread[thread{last.PID, last.TID}] = [2]int{start, n}
	}
	x.finishExt()
	x.devSelf = hugemem.Make[int64](n, n)
	x.devTotal = hugemem.Make[int64](n, n)
	for i := range x.selfNS {
		x.selfNS[i] = max(x.selfNS[i], 0)
	}
	return x
}

// opKey is an operator's sort key within its thread.
type opKey struct {
	ts, dur int64
	index   int32 // Event.Index (file order; B/E pairs are stored last)
	i       int32 // position in Trace.Events
}

// opOrder returns the operators' event indexes grouped by thread, threads
// in (pid, tid) order, each thread's operators by start, longer first,
// then file order (so a parent precedes the children it encloses), and
// the span of their External ids. Keys are sorted in a compact array, and
// a thread already in order (as recent Kineto versions write it) is not
// sorted at all.
func (d *deriver) opOrder() ([]int, extSpan) {
	evs := d.t.Events
	slot := map[thread]int{}
	var threads []thread
	var count []int
	last, lastSlot := thread{}, -1
	// slotOf numbers e's thread; consecutive ops usually share one.
	slotOf := func(e *trace.Event) int {
		if th := (thread{e.PID, e.TID}); lastSlot < 0 || th != last {
			k, ok := slot[th]
			if !ok {
				k = len(threads)
				slot[th] = k
				threads = append(threads, th)
				count = append(count, 0)
			}
			last, lastSlot = th, k
		}
		return lastSlot
	}
	n := 0
	var span extSpan
	for i := range evs {
		if e := &evs[i]; d.isOp(e) {
			count[slotOf(e)]++
			n++
			if e.Has&trace.HasExternalID != 0 {
				span.add(e.ExternalID)
			}
		}
	}
	// Threads in (pid, tid) order; each gets a contiguous range of keys.
	order := make([]int, len(threads))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(threads[a].pid, threads[b].pid), cmp.Compare(threads[a].tid, threads[b].tid))
	})
	start := make([]int, len(threads))
	next := 0
	for _, k := range order {
		start[k] = next
		next += count[k]
	}
	keys := hugemem.Make[opKey](n, n)
	fill := slices.Clone(start)
	for i := range evs {
		if e := &evs[i]; d.isOp(e) {
			k := slotOf(e)
			keys[fill[k]] = opKey{e.TS, e.Dur, e.Index, int32(i)}
			fill[k]++
		}
	}
	var tmp []opKey
	for k := range threads {
		seg := keys[start[k] : start[k]+count[k]]
		if !slices.IsSortedFunc(seg, opKeyCmp) {
			tmp = sortOpKeys(seg, tmp)
		}
	}
	ops := hugemem.Make[int](len(keys), len(keys))
	for j, k := range keys {
		ops[j] = int(k.i)
	}
	return ops, span
}

// opKeyCmp orders operators by start, longer first, then file order.
func opKeyCmp(a, b opKey) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(b.dur, a.dur), cmp.Compare(a.index, b.index))
}

// sortOpKeys sorts keys by opKeyCmp: an LSD radix sort on the start
// (relative to the earliest, 11 bits a pass, so a 2 s thread takes 3
// passes), then each run of equal starts sorted by the rest of the key.
// Runs are usually a parent and its first child, but a damaged trace may
// put a whole thread at one timestamp; that run is one O(n log n) sort.
// tmp is scratch space, returned for reuse.
func sortOpKeys(keys, tmp []opKey) []opKey {
	if len(keys) < 256 {
		slices.SortFunc(keys, opKeyCmp)
		return tmp
	}
	lo, hi := keys[0].ts, keys[0].ts
	for _, k := range keys {
		lo, hi = min(lo, k.ts), max(hi, k.ts)
	}
	if cap(tmp) < len(keys) {
		tmp = hugemem.Make[opKey](len(keys), len(keys))
	}
	src, dst := keys, tmp[:len(keys)]
	const bits = 11
	for shift := uint(0); shift < 64 && uint64(hi-lo)>>shift > 0; shift += bits {
		var count [1 << bits]int
		for _, k := range src {
			count[uint64(k.ts-lo)>>shift&(1<<bits-1)]++
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, k := range src {
			d := uint64(k.ts-lo) >> shift & (1<<bits - 1)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	// Order each run of equal starts by the rest of the key.
	for a := 0; a < len(keys); {
		b := a + 1
		for b < len(keys) && keys[b].ts == keys[a].ts {
			b++
		}
		if b-a > 1 {
			slices.SortFunc(keys[a:b], opKeyCmp)
		}
		a = b
	}
	return tmp
}

// launcher returns the op (position in x.ops) that launched GPU event g:
// by External id of the kernel or its launch call, else the innermost op
// enclosing the launch call on its thread; -1 when unknown.
func (d *deriver) launcher(x *opIndex, g *trace.Event) int {
	evs := d.t.Events
	if g.Has&trace.HasExternalID != 0 {
		if p, ok := x.byExt(g.ExternalID); ok {
			return p
		}
	}
	if g.Has&trace.HasCorrelation == 0 {
		return -1
	}
	li, ok := d.launch.get(g.Correlation)
	if !ok {
		return -1
	}
	l := &evs[li]
	if l.Has&trace.HasExternalID != 0 {
		if p, ok := x.byExt(l.ExternalID); ok {
			return p
		}
	}
	return d.enclosingOp(x, l.PID, l.TID, l.TS)
}

// enclosingOp returns the innermost op (position in x.ops) on thread
// (pid, tid) whose span [start, end] holds ts, or -1.
func (d *deriver) enclosingOp(x *opIndex, pid, tid trace.ID, ts int64) int {
	evs := d.t.Events
	r, ok := x.byThread[thread{pid, tid}]
	if !ok {
		return -1
	}
	seg := x.ops[r[0]:r[1]]
	j, _ := slices.BinarySearchFunc(seg, ts, func(i int, t int64) int { return cmp.Compare(evs[i].TS, t+1) })
	if j == 0 {
		return -1
	}
	for p := r[0] + j - 1; p >= 0; p = x.parent[p] {
		if evs[x.ops[p]].End() >= ts {
			return p
		}
	}
	return -1
}

// opTables derives the operator and kernel tables, precision, optimizer,
// repeated-op and label facts.
func (d *deriver) opTables() {
	evs := d.t.Events
	x := d.buildOps()
	d.ops = x
	var kernelNS, tcNS, mmNS, mmFP32NS, fp32KernelNS int64
	mmDType := false
	kstats := map[trace.Str]*KernelStat{}
	for _, i := range d.gpuActs {
		g := &evs[i]
		if g.Cat != trace.CatKernel || !d.hasGPU || g.DeviceID() != d.primary || !d.inWindow(g.TS) {
			continue
		}
		ks := kstats[g.Name]
		if ks == nil {
			ks = &KernelStat{Name: d.t.Name(g)}
			kstats[g.Name] = ks
		}
		ks.Count++
		ks.TotalUS += float64(g.Dur) / 1e3
		ks.MaxUS = max(ks.MaxUS, float64(g.Dur)/1e3)
		kernelNS += g.Dur
		op := d.launcher(x, g)
		if op >= 0 {
			x.devSelf[op] += g.Dur
			for p := op; p >= 0; p = x.parent[p] {
				x.devTotal[p] += g.Dur
			}
		}
		// Precision: the nearest matmul/conv op up the tree decides by dtype.
		mm := -1
		for p := op; p >= 0; p = x.parent[p] {
			if d.is(&evs[x.ops[p]], kMatmul) {
				mm = p
				break
			}
		}
		tc := d.is(g, kTensorCoreName)
		fp32Known := false
		if mm >= 0 {
			mmNS += g.Dur
			if sh, _ := d.shapes.Of(&evs[x.ops[mm]]); sh.DType != 0 {
				mmDType = true
				fp32Known = true
				switch dtypeClass(d.t.Str(sh.DType)) {
				case "fp32":
					mmFP32NS += g.Dur
					if !d.is(g, kCommKernel) {
						fp32KernelNS += g.Dur
					}
				case "half":
					tc = true
				}
			}
		}
		if !fp32Known && d.is(g, kFP32GemmName) && !d.is(g, kCommKernel) {
			fp32KernelNS += g.Dur // by name: an fp32 SIMT GEMM (sgemm without TF32)
		}
		if tc {
			tcNS += g.Dur
		}
	}
	if kernelNS > 0 && d.hasGPU {
		d.f.TensorCoreKernelTimeRatio = f64(float64(tcNS) / float64(kernelNS))
	}
	if mmDType && mmNS > 0 {
		d.f.FP32MatmulTimeRatio = f64(float64(mmFP32NS) / float64(mmNS))
	}
	if d.hasGPU {
		d.f.FP32MatmulKernelTimeRatio = d.ratio(fp32KernelNS)
	}
	d.kernelTable(kstats)
	if !d.concurrent {
		d.roofline(x, kernelNS)
		d.opTablesRest(x)
		return
	}
	// The roofline reads x, the trace and Facts fields set before, and
	// sets its own (none of which the passes after it read), so it runs
	// beside them with its own window hint (see hostAndOpTables).
	r := *d
	beside(func() { r.roofline(x, kernelNS) }, func() { d.opTablesRest(x) })
}

// opTablesRest derives the op tables' facts after the roofline: the op,
// optimizer, repeated-op, chain and label facts.
func (d *deriver) opTablesRest(x *opIndex) {
	d.viewOpCost(x)
	d.opTable(x)
	d.optimizer(x)
	d.repeatedOps(x)
	d.chainTop(x)
	d.labels()
}

// dtypeClass maps a record_shapes dtype string to fp32, half (fp16/bf16,
// tensor-core eligible) or other.
func dtypeClass(s string) string {
	switch s {
	case "float", "float32":
		return "fp32"
	case "c10::Half", "c10::BFloat16", "half", "bfloat16", "c10::Float8_e4m3fn", "c10::Float8_e5m2":
		return "half"
	}
	return "other"
}

const topN = 25

func (d *deriver) kernelTable(kstats map[trace.Str]*KernelStat) {
	d.topKernel(kstats)
	for _, ks := range kstats {
		ks.MeanUS = ks.TotalUS / float64(ks.Count)
		d.f.TopKernels = append(d.f.TopKernels, *ks)
	}
	slices.SortFunc(d.f.TopKernels, func(a, b KernelStat) int {
		return cmp.Or(cmp.Compare(b.TotalUS, a.TotalUS), cmp.Compare(a.Name, b.Name))
	})
	if len(d.f.TopKernels) > topN {
		d.f.TopKernels = d.f.TopKernels[:topN]
	}
}

func (d *deriver) opTable(x *opIndex) {
	evs := d.t.Events
	stats := make([]*OpStat, d.t.NumStrs()) // by name
	for p, i := range x.ops {
		e := &evs[i]
		if !d.inWindow(e.TS) {
			continue
		}
		st := stats[e.Name]
		if st == nil {
			st = &OpStat{Name: d.t.Name(e)}
			stats[e.Name] = st
		}
		st.Calls++
		st.SelfCPUUS += float64(x.selfNS[p]) / 1e3
		st.SelfDeviceUS += float64(x.devSelf[p]) / 1e3
		if !x.insideSameName(evs, p) {
			st.TotalCPUUS += float64(e.Dur) / 1e3
			st.TotalDeviceUS += float64(x.devTotal[p]) / 1e3
		}
	}
	for _, st := range stats {
		if st == nil {
			continue
		}
		if d.f.StepsCount > 0 {
			st.CallsPerStep = float64(st.Calls) / float64(d.f.StepsCount)
		}
		d.f.TopOps = append(d.f.TopOps, *st)
	}
	slices.SortFunc(d.f.TopOps, func(a, b OpStat) int {
		return cmp.Or(cmp.Compare(b.SelfCPUUS, a.SelfCPUUS), cmp.Compare(a.Name, b.Name))
	})
	if len(d.f.TopOps) > topN {
		d.f.TopOps = d.f.TopOps[:topN]
	}
}

// optimizer derives the optimizer facts from Optimizer.step#... and
// Optimizer.zero_grad#... spans and the operators inside them on their thread.
func (d *deriver) optimizer(x *opIndex) {
	evs := d.t.Events
	var spans []interval
	var steps, zeros []int
	for _, i := range d.rare {
		e := &evs[i]
		if !isCPU(e) || !d.is(e, kOptimizer) {
			continue
		}
		spans = append(spans, interval{e.TS, e.End()})
		if d.is(e, kOptStep) {
			steps = append(steps, i)
		} else {
			zeros = append(zeros, i)
		}
	}
	if len(spans) == 0 {
		return
	}
	d.f.OptimizerTimeRatio = d.ratio(d.clippedUnion(spans))
	inside := func(span *trace.Event, visit func(p int)) {
		r, ok := x.byThread[thread{span.PID, span.TID}]
		if !ok {
			return
		}
		seg := x.ops[r[0]:r[1]]
		j, _ := slices.BinarySearchFunc(seg, span.TS, func(i int, t int64) int { return cmp.Compare(evs[i].TS, t) })
		for p := r[0] + j; p < r[1] && evs[x.ops[p]].TS < span.End(); p++ {
			visit(p)
		}
	}
	var fills, direct int64
	multi, any := false, false
	for _, i := range zeros {
		if !d.inWindow(evs[i].TS) {
			continue
		}
		inside(&evs[i], func(p int) {
			// One fill per gradient: the 2020 profiler recorded each
			// zero_ twice, one inside the other.
			if d.t.Name(&evs[x.ops[p]]) == "aten::zero_" && !x.insideSameName(evs, p) {
				fills++
			}
		})
	}
	classNS := map[string]int64{}
	for _, i := range steps {
		s := &evs[i]
		if c, ok := optimizerClass(d.t.Name(s)); ok {
			classNS[c] += ivset(d.window).clipLen(s.TS, s.End())
			if fusedClass(c) {
				multi = true
			}
		}
		inside(s, func(p int) {
			any = true
			if d.is(&evs[x.ops[p]], kMultiTensor) {
				multi = true
			}
			if par := x.parent[p]; par < 0 || evs[x.ops[par]].TS < s.TS {
				if d.inWindow(s.TS) {
					direct++
				}
			}
		})
	}
	d.f.ZeroGradFillPerStep = d.perStep(fills)
	if len(zeros) == 0 {
		d.f.ZeroGradFillPerStep = nil
	}
	if any {
		single := !multi
		d.f.OptimizerSingleTensor = &single
		d.f.OptimizerOpsPerStep = d.perStep(direct)
	}
	var best string
	for c, ns := range classNS {
		if ns > 0 && (best == "" || ns > classNS[best] || ns == classNS[best] && c < best) {
			best = c
		}
	}
	if best != "" {
		d.f.OptimizerClass = &best
	}
}

// fusedClass reports an optimizer class that runs its own multi-tensor
// kernels: apex's, DeepSpeed's and torchrec's FusedAdam, FusedLAMB,
// FusedSGD (their per-parameter bookkeeping ops are not the update).
func fusedClass(c string) bool { return strings.HasPrefix(c, "Fused") }

// optimizerClass is CLASS of an Optimizer.step#CLASS.step span, the name
// torch.optim.Optimizer's profiling hook gives it.
func optimizerClass(name string) (string, bool) {
	c, ok := strings.CutPrefix(name, "Optimizer.step#")
	if !ok {
		return "", false
	}
	c, ok = strings.CutSuffix(c, ".step")
	return c, ok && c != ""
}

// repeatedOps finds the top-level operator called most often per step
// whose mean duration is under ChainKernelNS (20 us).
func (d *deriver) repeatedOps(x *opIndex) {
	if d.f.StepsCount == 0 {
		return
	}
	evs := d.t.Events
	type agg struct {
		calls, ns int64
		first     int
	}
	by := map[trace.Str]*agg{}
	for p, i := range x.ops {
		e := &evs[i]
		if x.parent[p] >= 0 || !d.inWindow(e.TS) {
			continue
		}
		a := by[e.Name]
		if a == nil {
			a = &agg{first: i}
			by[e.Name] = a
		}
		a.calls++
		a.ns += e.Dur
	}
	var best *agg
	for _, a := range by {
		if a.ns >= a.calls*d.cfg.ChainKernelNS {
			continue
		}
		if best == nil || a.calls > best.calls || a.calls == best.calls && evs[a.first].Index < evs[best.first].Index {
			best = a
		}
	}
	if best == nil {
		d.f.RepeatedSmallOpCallsPerStep = f64(0)
		d.f.RepeatedSmallOpTimeRatio = f64(0)
		return
	}
	d.f.RepeatedSmallOpCallsPerStep = d.perStep(best.calls)
	d.f.RepeatedSmallOpTimeRatio = d.ratio(best.ns)
	name := d.t.Name(&evs[best.first])
	d.f.RepeatedSmallOpName = &name
	// Examples is not written here: the op tables may run beside the
	// passes that write it (see Derive).
	d.repeatedExample = []EventRef{d.ref(&evs[best.first])}
}

// topKernel derives the dominant compute kernel: the kernel name with the
// largest summed duration in W among non-communication kernels, its share
// of their summed duration, and |union of its intervals clipped to W| / |W|.
func (d *deriver) topKernel(kstats map[trace.Str]*KernelStat) {
	var best trace.Str
	var bestUS, totalUS float64
	found := false
	// Summed in name order: float addition in map order would change the
	// last digits from run to run.
	names := make([]trace.Str, 0, len(kstats))
	for name := range kstats {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b trace.Str) int { return strings.Compare(d.t.Str(a), d.t.Str(b)) })
	for _, name := range names {
		ks := kstats[name]
		if d.kind[name]&kCommKernel != 0 {
			continue
		}
		totalUS += ks.TotalUS
		if !found || ks.TotalUS > bestUS || ks.TotalUS == bestUS && d.t.Str(name) < d.t.Str(best) {
			best, bestUS, found = name, ks.TotalUS, true
		}
	}
	if !found || totalUS <= 0 {
		return
	}
	evs := d.t.Events
	var iv []interval
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.Cat == trace.CatKernel && e.Name == best && e.DeviceID() == d.primary && d.inWindow(e.TS) {
			iv = append(iv, interval{e.TS, e.End()})
		}
	}
	name := d.t.Str(best)
	d.f.TopKernelName = &name
	d.f.TopKernelShare = f64(bestUS / totalUS)
	d.f.TopKernelTimeRatio = d.ratio(d.clippedUnion(iv))
}

// minViewOps is the fewest view-only calls view_op_median_us is taken
// from.
const minViewOps = 50

// viewOpCost sets view_op_median_us from the view-only operators in W of
// the thread that launches the most kernels (all threads without launch
// calls): the host cost that paces the GPU. Other threads differ (the
// autograd thread of an old profiler ran views at 4 us while the main
// thread took 20).
func (d *deriver) viewOpCost(x *opIndex) {
	evs := d.t.Events
	// Launch calls per thread; consecutive calls mostly share a thread, so
	// the map is read only when it changes.
	launches := map[thread]*int{}
	var last thread
	var n *int
	for _, i := range d.calls {
		if e := &evs[i]; d.is(e, kLaunch) && d.inWindow(e.TS) {
			if th := (thread{e.PID, e.TID}); n == nil || th != last {
				if n = launches[th]; n == nil {
					n = new(int)
					launches[th] = n
				}
				last = th
			}
			*n++
		}
	}
	var top thread // the most launches; ties: the smallest (pid, tid)
	best := 0
	for th, n := range launches {
		if *n > best || *n == best && (th.pid < top.pid || th.pid == top.pid && th.tid < top.tid) {
			top, best = th, *n
		}
	}
	lo, hi := 0, len(x.ops)
	if len(launches) > 0 {
		r, ok := x.byThread[top]
		if !ok {
			return
		}
		lo, hi = r[0], r[1]
	}
	var durs []float64
	for _, i := range x.ops[lo:hi] {
		if e := &evs[i]; d.is(e, kMetaOp) && d.inWindow(e.TS) {
			durs = append(durs, float64(e.Dur)/1e3)
		}
	}
	if len(durs) < minViewOps {
		return
	}
	slices.Sort(durs)
	d.f.ViewOpMedianUS = f64(percentile(durs, 0.5))
}
