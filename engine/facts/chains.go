package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// pointwiseOps are the aten ops that count as elementwise in CPU-only
// traces (docs/ARCHITECTURE.md "Fine print"), with their in-place "_" forms.
var pointwiseOps = func() map[string]bool {
	ops := strings.Fields(`abs neg sign sgn reciprocal sqrt rsqrt square exp exp2 expm1 log log2 log10 log1p
sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh erf erfc erfinv floor ceil round
trunc frac sigmoid logit relu relu6 leaky_relu elu selu celu gelu silu mish hardtanh
hardsigmoid hardswish softplus softshrink hardshrink threshold nan_to_num clamp clamp_min
clamp_max clip bitwise_not logical_not add sub rsub mul div true_divide floor_divide remainder
fmod pow float_power atan2 hypot maximum minimum fmax fmin eq ne lt le gt ge logical_and
logical_or logical_xor bitwise_and bitwise_or bitwise_xor lerp addcmul addcdiv where
masked_fill xlogy copysign`)
	m := map[string]bool{}
	for _, op := range ops {
		m["aten::"+op] = true
		m["aten::"+op+"_"] = true
	}
	for _, op := range strings.Fields("threshold sigmoid tanh gelu silu hardtanh leaky_relu elu softplus mish hardswish hardsigmoid") {
		m["aten::"+op+"_backward"] = true
	}
	return m
}()

// chains derives elementwise_chain_* facts: maximal runs of at least
// ChainMinLength consecutive short elementwise kernels on one stream of the
// primary device, or, in CPU-only traces, of top-level pointwise aten ops on
// one thread.
func (d *deriver) chains() {
	evs := d.t.Events
	groups := map[int64][]int{}
	if d.hasGPU {
		for _, i := range d.gpuActs {
			e := &evs[i]
			if e.Cat == trace.CatKernel && e.DeviceID() == d.primary && d.inWindow(e.TS) {
				k := e.StreamID()
				groups[k] = append(groups[k], i)
			}
		}
		for _, idx := range groups {
			slices.SortFunc(idx, func(a, b int) int {
				return cmp.Or(cmp.Compare(evs[a].TS, evs[b].TS), cmp.Compare(evs[a].Index, evs[b].Index))
			})
			d.runs(idx, func(e *trace.Event) bool {
				return e.Dur < d.cfg.ChainKernelNS && d.is(e, kElementwise)
			})
		}
	} else {
		d.cpuChains()
	}
	d.f.ElementwiseChainTimeRatio = 0
	if r := d.ratio(d.chainNS); r != nil {
		d.f.ElementwiseChainTimeRatio = *r
	}
}

// runs counts maximal runs of candidates in idx (already ordered).
func (d *deriver) runs(idx []int, candidate func(*trace.Event) bool) {
	evs := d.t.Events
	n, dur, start := 0, int64(0), 0
	flush := func(end int) {
		if n >= d.cfg.ChainMinLength {
			d.f.ElementwiseChainCount++
			d.f.ElementwiseChainKernels += int64(n)
			d.chainNS += dur
			d.keepChain(idx[start:end], dur)
		}
		n, dur = 0, 0
	}
	for k, i := range idx {
		if e := &evs[i]; candidate(e) {
			if n == 0 {
				start = k
			}
			n++
			dur += e.Dur
			continue
		}
		flush(k)
	}
	flush(len(idx))
}

// maxTopChains bounds Facts.ElementwiseChainTop.
const maxTopChains = 3

// topChain is a chain kept for naming: its members and summed duration.
type topChain struct {
	members []int
	ns      int64
}

// keepChain keeps the maxTopChains longest chains (ties: earliest).
func (d *deriver) keepChain(members []int, ns int64) {
	d.topChains = append(d.topChains, topChain{slices.Clone(members), ns})
	slices.SortStableFunc(d.topChains, func(a, b topChain) int { return cmp.Compare(b.ns, a.ns) })
	if len(d.topChains) > maxTopChains {
		d.topChains = d.topChains[:maxTopChains]
	}
}

// chainTop names the longest chains: the operators that launched their
// kernels (GPU) or the ops themselves (CPU), where in the code (with_stack)
// and in which record_function region.
func (d *deriver) chainTop(x *opIndex) {
	evs := d.t.Events
	for _, c := range d.topChains {
		info := ChainInfo{Members: int64(len(c.members)), TimeUS: float64(c.ns) / 1e3}
		seen := map[string]bool{}
		anchor := c.members[0]
		for k, i := range c.members {
			name := d.t.Name(&evs[i])
			if evs[i].Cat.IsGPU() {
				if op := d.launcher(x, &evs[i]); op >= 0 {
					name = d.t.Name(&evs[x.ops[op]])
					if k == 0 {
						anchor = x.ops[op]
					}
				}
			}
			if !seen[name] && len(info.Ops) < 8 {
				seen[name] = true
				info.Ops = append(info.Ops, name)
			}
		}
		info.Site = d.userFrame(anchor)
		info.Scope = d.scopeOf(anchor)
		info.Example = d.ref(&evs[c.members[0]])
		d.f.ElementwiseChainTop = append(d.f.ElementwiseChainTop, info)
	}
}

// isAnnotation reports whether a CPU event is an annotation that never
// makes anything nested: user_annotation, ProfilerStep#N, and in
// Operator/no-category traces every name without "::" that is not an
// autograd node (...Backward[N]) or detach/detach_.
func (d *deriver) isAnnotation(e *trace.Event) bool {
	if e.Cat == trace.CatUserAnnotation || d.is(e, kStep) {
		return true
	}
	if e.Cat != trace.CatCPUOp && e.Cat != trace.CatNone || !d.is(e, kPlainName) {
		return false
	}
	return e.Cat == trace.CatNone || d.t.Str(e.CatName) == "Operator"
}

// isAutogradNode matches "...Backward" optionally followed by a digit
// suffix (MulBackward0, AddmmBackward1).
func isAutogradNode(name string) bool {
	i := strings.LastIndex(name, "Backward")
	if i < 0 {
		return false
	}
	for _, c := range name[i+len("Backward"):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cpuChains finds chains among top-level CPU operators per thread. An
// operator is nested when it starts inside an earlier operator of the same
// thread, closed at the parent's end (with 1 us timestamps an op starting
// exactly at its parent's end is nested).
func (d *deriver) cpuChains() {
	evs := d.t.Events
	type thread struct{ pid, tid trace.ID }
	ops := map[thread][]int{}
	for i := range evs {
		e := &evs[i]
		if e.Ph == trace.PhComplete && (e.Cat == trace.CatCPUOp || e.Cat == trace.CatNone) {
			k := thread{e.PID, e.TID}
			ops[k] = append(ops[k], i)
		}
	}
	for _, idx := range ops {
		sortByStart(evs, idx)
		var top []int
		end := int64(-1 << 62)
		for _, i := range idx {
			e := &evs[i]
			if d.isAnnotation(e) {
				continue
			}
			nested := e.TS <= end
			end = max(end, e.End())
			if !nested && d.inWindow(e.TS) {
				top = append(top, i)
			}
		}
		d.runs(top, func(e *trace.Event) bool {
			return e.Dur < d.cfg.ChainKernelNS && d.is(e, kPointwise)
		})
	}
}
