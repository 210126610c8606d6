package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// comparability lists why before and after may not measure the same work
// on the same setup: another device, rank, world size or profiler options,
// or a side read from a damaged trace.
func comparability(b, a *TraceResult) []string {
	var out []string
	bf, af := b.Facts, a.Facts
	if bf.Device != nil && af.Device != nil && bf.Device.Name != af.Device.Name {
		out = append(out, fmt.Sprintf("different devices: %s → %s; step times compare hardware as well as the change", orUnnamed(bf.Device.Name), orUnnamed(af.Device.Name)))
	} else if bf.HasGPU != af.HasGPU {
		out = append(out, fmt.Sprintf("GPU activity on one side only (before %s, after %s)", yesNo(bf.HasGPU), yesNo(af.HasGPU)))
	}
	if b.Rank != nil && a.Rank != nil && *b.Rank != *a.Rank {
		out = append(out, fmt.Sprintf("different ranks: %d → %d", *b.Rank, *a.Rank))
	}
	if bf.WorldSize != nil && af.WorldSize != nil && *bf.WorldSize != *af.WorldSize {
		out = append(out, fmt.Sprintf("different world sizes: %d → %d", *bf.WorldSize, *af.WorldSize))
	}
	var opts []string
	for _, o := range []struct {
		name string
		b, a bool
	}{{"record_shapes", bf.HasShapes, af.HasShapes}, {"with_stack", bf.HasStack, af.HasStack}, {"profile_memory", bf.HasMemory, af.HasMemory}} {
		if o.b != o.a {
			opts = append(opts, fmt.Sprintf("%s %s → %s", o.name, onOff(o.b), onOff(o.a)))
		}
	}
	if len(opts) > 0 {
		out = append(out, "different profiler options: "+strings.Join(opts, ", ")+"; profiling overhead differs")
	}
	for _, side := range []struct {
		name string
		t    *TraceResult
	}{{"before", b}, {"after", a}} {
		if w := damaged(side.name, side.t); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// damaged says that a side's trace was repaired or had events dropped
// (its Health): its facts cover what could be read, so the comparison may
// compare a part with a whole. "" for a trace read whole.
func damaged(side string, t *TraceResult) string {
	h := t.Health
	if !h.Repaired && h.Dropped == 0 {
		return ""
	}
	var first string
	for _, d := range h.Diagnostics {
		if d.Kind == trace.DiagRepair || d.Kind == trace.DiagDropped {
			first = "; first: " + d.String()
			break
		}
	}
	what := "repaired"
	if !h.Repaired {
		what = "read with events dropped"
	}
	return fmt.Sprintf("the %s trace %s was %s (%d of %d events kept%s): its numbers cover what could be read", side, t.Input.Path, what, h.EventsKept, h.EventsRead, first)
}

func orUnnamed(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// DiffTopN is how many names each list of a TableDiff keeps.
const DiffTopN = 5

// TableDiff compares a table of named times (kernels by total time,
// operators by self CPU time) per step: names added and removed, and those
// that got slower or faster beyond the noise, the largest DiffTopN of each.
type TableDiff struct {
	Added   []TimeDelta `json:"added"`
	Removed []TimeDelta `json:"removed"`
	Slower  []TimeDelta `json:"slower"`
	Faster  []TimeDelta `json:"faster"`
}

// TimeDelta is one name's time per step before and after, in microseconds
// (nil where the side does not list it). DeltaUS is after - before, an
// absent side counting 0. OutOfTop marks an added or removed name whose
// other side lists only its top facts.TopRows names: it may only have left
// that list.
type TimeDelta struct {
	Name     string   `json:"name"`
	BeforeUS *float64 `json:"before_us"`
	AfterUS  *float64 `json:"after_us"`
	DeltaUS  float64  `json:"delta_us"`
	OutOfTop bool     `json:"out_of_top,omitempty"`
}

func perStepDivisor(f *facts.Facts) float64 {
	if f.StepsCount > 0 {
		return float64(f.StepsCount)
	}
	return 1
}

func diffKernels(b, a *facts.Facts, noise float64) TableDiff {
	table := func(f *facts.Facts) (map[string]float64, []string) {
		m, order := map[string]float64{}, []string(nil)
		for _, k := range f.TopKernels {
			if _, ok := m[k.Name]; !ok {
				order = append(order, k.Name)
			}
			m[k.Name] += k.TotalUS / perStepDivisor(f)
		}
		return m, order
	}
	bm, bo := table(b)
	am, ao := table(a)
	return diffTable(bm, am, bo, ao, len(b.TopKernels) >= facts.TopRows, len(a.TopKernels) >= facts.TopRows, noise)
}

func diffOps(b, a *facts.Facts, noise float64) TableDiff {
	table := func(f *facts.Facts) (map[string]float64, []string) {
		m, order := map[string]float64{}, []string(nil)
		for _, o := range f.TopOps {
			if _, ok := m[o.Name]; !ok {
				order = append(order, o.Name)
			}
			m[o.Name] += o.SelfCPUUS / perStepDivisor(f)
		}
		return m, order
	}
	bm, bo := table(b)
	am, ao := table(a)
	return diffTable(bm, am, bo, ao, len(b.TopOps) >= facts.TopRows, len(a.TopOps) >= facts.TopRows, noise)
}

// minDeltaUS is the smallest change of time per step that a table diff
// lists (microseconds).
const minDeltaUS = 1

func diffTable(bm, am map[string]float64, bo, ao []string, bFull, aFull bool, noise float64) TableDiff {
	var d TableDiff
	names := append(slices.Clone(bo), ao...)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		x, inB := bm[n]
		y, inA := am[n]
		td := TimeDelta{Name: n, DeltaUS: y - x}
		if inB {
			td.BeforeUS = ptr(x)
		}
		if inA {
			td.AfterUS = ptr(y)
		}
		switch {
		case !inB:
			td.OutOfTop = bFull
			d.Added = append(d.Added, td)
		case !inA:
			td.OutOfTop = aFull
			d.Removed = append(d.Removed, td)
		case math.Abs(td.DeltaUS) < minDeltaUS || math.Abs(td.DeltaUS) <= noise*max(x, y):
		case td.DeltaUS > 0:
			d.Slower = append(d.Slower, td)
		default:
			d.Faster = append(d.Faster, td)
		}
	}
	// Largest change first; ties by name, so output is deterministic.
	byDelta := func(sign float64) func(p, q TimeDelta) int {
		return func(p, q TimeDelta) int {
			return cmp.Or(cmp.Compare(sign*q.DeltaUS, sign*p.DeltaUS), strings.Compare(p.Name, q.Name))
		}
	}
	slices.SortFunc(d.Added, byDelta(1))
	slices.SortFunc(d.Slower, byDelta(1))
	slices.SortFunc(d.Removed, byDelta(-1))
	slices.SortFunc(d.Faster, byDelta(-1))
	cut := func(v []TimeDelta) []TimeDelta { return v[:min(len(v), DiffTopN)] }
	d.Added, d.Removed, d.Slower, d.Faster = cut(d.Added), cut(d.Removed), cut(d.Slower), cut(d.Faster)
	return d
}
