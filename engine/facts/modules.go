package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// modulePrefix starts the name of the python_function frame that
// with_modules=True records around an nn.Module's forward.
const modulePrefix = "nn.Module: "

// nestOnThread sorts the complete events idx by (pid, tid, start, longer
// first, file order) and returns them with each one's enclosing event on
// the thread (its position in the sorted list, or -1). Partial overlaps
// nest by start.
func nestOnThread(evs []trace.Event, idx []int) ([]int, []int) {
	slices.SortFunc(idx, func(a, b int) int {
		ea, eb := &evs[a], &evs[b]
		return cmp.Or(cmp.Compare(ea.PID, eb.PID), cmp.Compare(ea.TID, eb.TID), cmp.Compare(ea.TS, eb.TS), cmp.Compare(eb.Dur, ea.Dur), cmp.Compare(ea.Index, eb.Index))
	})
	parent := make([]int, len(idx))
	var stack []int
	for k, i := range idx {
		e := &evs[i]
		if k > 0 {
			if p := &evs[idx[k-1]]; p.PID != e.PID || p.TID != e.TID {
				stack = stack[:0]
			}
		}
		for len(stack) > 0 && evs[idx[stack[len(stack)-1]]].End() <= e.TS {
			stack = stack[:len(stack)-1]
		}
		parent[k] = -1
		if len(stack) > 0 {
			parent[k] = stack[len(stack)-1]
		}
		stack = append(stack, k)
	}
	return idx, parent
}

// nested is a nestOnThread list with each thread's run of it, for
// innermost.
type nested struct {
	idx, parent []int
	runs        []threadRun
	last        int // the run innermost found last (launches come in runs)
}

// threadRun is one thread's part [lo, hi) of a nested list.
type threadRun struct {
	th     thread
	lo, hi int
}

// newNested sorts and nests idx (nestOnThread) and finds its runs.
func newNested(evs []trace.Event, idx []int) *nested {
	sorted, parent := nestOnThread(evs, idx)
	return nestedOf(evs, sorted, parent)
}

// nestedOf wraps a list nestOnThread made.
func nestedOf(evs []trace.Event, idx, parent []int) *nested {
	n := &nested{idx: idx, parent: parent}
	for k, i := range idx {
		th := thread{evs[i].PID, evs[i].TID}
		if l := len(n.runs) - 1; l >= 0 && n.runs[l].th == th {
			n.runs[l].hi = k + 1
			continue
		}
		n.runs = append(n.runs, threadRun{th, k, k + 1})
	}
	return n
}

// innermost returns the position in n.idx of the innermost event on
// thread (pid, tid) whose span [start, end] holds ts, or -1.
func (n *nested) innermost(evs []trace.Event, pid, tid trace.ID, ts int64) int {
	th := thread{pid, tid}
	if n.last >= len(n.runs) || n.runs[n.last].th != th {
		n.last = slices.IndexFunc(n.runs, func(r threadRun) bool { return r.th == th })
		if n.last < 0 {
			n.last = 0
			return -1
		}
	}
	r := n.runs[n.last]
	seg := n.idx[r.lo:r.hi]
	k, _ := slices.BinarySearchFunc(seg, ts, func(i int, t int64) int { return cmp.Compare(evs[i].TS, t+1) })
	for k = r.lo + k - 1; k >= 0; k = n.parent[k] {
		if evs[n.idx[k]].End() >= ts {
			return k
		}
	}
	return -1
}

// spanAgg accumulates one label or module.
type spanAgg struct {
	name     string
	parent   int // modules: the enclosing module's node, -1 at the top
	depth    int
	calls    int64
	spans    []interval // host spans starting in W
	gpuNS    int64
	kernels  int64
	gpuSpans []interval // gpu_user_annotation spans (labels)
}

// labels derives Facts.Labels and Facts.Modules (see LabelStat): one pass
// over the annotations and the python_function frames already indexed,
// and one over the primary device's kernels when either exists.
func (d *deriver) labels() {
	evs := d.t.Events
	// Labels: one aggregate per name; slot maps each annotation (in
	// nestOnThread order) to it.
	an := newNested(evs, slices.Clone(d.annotations()))
	ann, annParent := an.idx, an.parent
	var labels []spanAgg
	byName := map[trace.Str]int{}
	slotOf := func(name trace.Str) int {
		k, ok := byName[name]
		if !ok {
			k = len(labels)
			byName[name] = k
			labels = append(labels, spanAgg{name: d.t.Str(name), parent: -1})
		}
		return k
	}
	annSlot := make([]int, len(ann))
	for k, i := range ann {
		e := &evs[i]
		annSlot[k] = slotOf(e.Name)
		if d.inWindow(e.TS) {
			a := &labels[annSlot[k]]
			a.calls++
			a.spans = append(a.spans, interval{e.TS, e.End()})
		}
	}
	for _, i := range d.gpuAnnots {
		e := &evs[i]
		if d.hasGPU && e.DeviceID() == d.primary && d.inWindow(e.TS) {
			k := slotOf(e.Name) // may grow labels: index after it
			labels[k].gpuSpans = append(labels[k].gpuSpans, interval{e.TS, e.End()})
		}
	}
	// Modules: a node per path; modOf maps each frame to its innermost
	// enclosing module frame (itself when a module), nodeOf a module
	// frame to its node.
	d.indexFrames()
	frames, fparent := d.frames, d.frameParent
	var fn *nested // built only when there are modules
	var modules []spanAgg
	var modOf, nodeOf []int
	type pathKey struct {
		parent int
		name   trace.Str
	}
	nodes := map[pathKey]int{}
	for k, i := range frames {
		e := &evs[i]
		up := -1
		if p := fparent[k]; p >= 0 && modOf != nil {
			up = modOf[p]
		}
		if !d.is(e, kModule) {
			if modOf != nil {
				modOf[k] = up
			}
			continue
		}
		if modOf == nil {
			modOf, nodeOf = make([]int, len(frames)), make([]int, len(frames))
			for q := 0; q < k; q++ {
				modOf[q] = -1
			}
		}
		modOf[k] = k
		parentNode := -1
		if up >= 0 {
			parentNode = nodeOf[up]
		}
		key := pathKey{parentNode, e.Name}
		n, ok := nodes[key]
		if !ok {
			n = len(modules)
			nodes[key] = n
			a := spanAgg{name: strings.TrimPrefix(d.t.Name(e), modulePrefix), parent: parentNode}
			if parentNode >= 0 {
				a.depth = modules[parentNode].depth + 1
			}
			modules = append(modules, a)
		}
		nodeOf[k] = n
		if d.inWindow(e.TS) {
			modules[n].calls++
			modules[n].spans = append(modules[n].spans, interval{e.TS, e.End()})
		}
	}
	if len(modules) > 0 {
		fn = nestedOf(evs, frames, fparent)
	}
	if d.hasGPU && (len(ann) > 0 || len(modules) > 0) {
		var seen []int
		for _, gi := range d.gpuActs {
			g := &evs[gi]
			if g.Cat != trace.CatKernel || g.DeviceID() != d.primary || g.Has&trace.HasCorrelation == 0 || !d.inWindow(g.TS) {
				continue
			}
			li, ok := d.launch.get(g.Correlation)
			if !ok {
				continue
			}
			l := &evs[li]
			seen = seen[:0]
			for k := an.innermost(evs, l.PID, l.TID, l.TS); k >= 0; k = annParent[k] {
				if s := annSlot[k]; evs[ann[k]].End() >= l.TS && !slices.Contains(seen, s) {
					seen = append(seen, s)
					labels[s].gpuNS += g.Dur
					labels[s].kernels++
				}
			}
			if len(modules) == 0 {
				continue
			}
			if k := fn.innermost(evs, l.PID, l.TID, l.TS); k >= 0 && modOf[k] >= 0 {
				for n := nodeOf[modOf[k]]; n >= 0; n = modules[n].parent {
					modules[n].gpuNS += g.Dur
					modules[n].kernels++
				}
			}
		}
	}
	d.f.Labels = d.labelRows(labels, false)
	d.f.Modules = d.labelRows(modules, true)
}

// labelRows turns aggregates into the top LabelStat rows.
func (d *deriver) labelRows(aggs []spanAgg, modules bool) []LabelStat {
	var out []LabelStat
	for n := range aggs {
		a := &aggs[n]
		if a.calls == 0 && a.kernels == 0 {
			continue
		}
		ns := d.clippedUnion(a.spans)
		l := LabelStat{Name: a.name, Calls: a.calls, TotalUS: float64(ns) / 1e3, GPUUS: float64(a.gpuNS) / 1e3, Kernels: a.kernels}
		if d.f.StepsCount > 0 {
			l.PerStepUS = l.TotalUS / float64(d.f.StepsCount)
		}
		if r := d.ratio(ns); r != nil {
			l.Ratio = *r
		}
		if len(a.gpuSpans) > 0 {
			l.GPUSpanUS = f64(float64(d.clippedUnion(a.gpuSpans)) / 1e3)
		}
		if modules {
			l.Depth = a.depth
			parts := []string{a.name}
			for p := a.parent; p >= 0; p = aggs[p].parent {
				parts = append(parts, aggs[p].name)
			}
			slices.Reverse(parts)
			l.Path = strings.Join(parts, "/")
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b LabelStat) int {
		return cmp.Or(cmp.Compare(max(b.GPUUS, b.TotalUS), max(a.GPUUS, a.TotalUS)), strings.Compare(a.Path, b.Path), strings.Compare(a.Name, b.Name))
	})
	if len(out) > topN {
		out = out[:topN]
	}
	return out
}
