package facts

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestCorrIndex checks both layouts: compact ids (dense table) and ids
// spread wider than the table may grow (map), with the earliest call in
// file order winning a repeated id, and non-calls ignored.
func TestCorrIndex(t *testing.T) {
	call := func(corr int64, index int32) trace.Event {
		return trace.Event{Cat: trace.CatRuntime, Ph: trace.PhComplete, Has: trace.HasCorrelation, Correlation: corr, Index: index}
	}
	for name, ids := range map[string][]int64{"dense": {100, 101, 103}, "sparse": {100, 1 << 40, -5}} {
		evs := []trace.Event{
			call(ids[0], 5),
			call(ids[1], 1),
			call(ids[0], 2), // earlier in the file than event 0: wins
			{Cat: trace.CatKernel, Ph: trace.PhComplete, Has: trace.HasCorrelation, Correlation: ids[2]}, // not a call: not listed
			{Cat: trace.CatRuntime, Ph: trace.PhComplete, Correlation: ids[2]},                           // no correlation arg
		}
		x := newCorrIndex(evs, []int{0, 1, 2, 4})
		if (x.dense != nil) != (name == "dense") {
			t.Errorf("%s: dense layout = %v", name, x.dense != nil)
		}
		for _, c := range []struct {
			corr int64
			i    int
			ok   bool
		}{{ids[0], 2, true}, {ids[1], 1, true}, {ids[2], 0, false}, {ids[0] - 1, 0, false}, {1 << 50, 0, false}} {
			i, ok := x.get(c.corr)
			if ok != c.ok || ok && i != c.i {
				t.Errorf("%s: get(%d) = %d, %v; want %d, %v", name, c.corr, i, ok, c.i, c.ok)
			}
		}
	}
}

// TestCorrSet checks membership in both layouts, ids outside the range
// and events without a correlation id.
func TestCorrSet(t *testing.T) {
	for name, ids := range map[string][]int64{"bitmap": {100, 163, 164, 300}, "map": {100, 1 << 40, -5, 7}} {
		var evs []trace.Event
		for _, c := range ids {
			evs = append(evs, trace.Event{Has: trace.HasCorrelation, Correlation: c})
		}
		evs = append(evs, trace.Event{Correlation: 555}) // no correlation arg
		idx := []int{0, 1, 2, 3, 4}
		s := newCorrSet(evs, idx)
		if (s.bits != nil) != (name == "bitmap") {
			t.Errorf("%s: bitmap layout = %v", name, s.bits != nil)
		}
		for _, c := range ids {
			if !s.has(c) {
				t.Errorf("%s: has(%d) = false", name, c)
			}
		}
		for _, c := range []int64{555, 99, 101, 165, 301, 1 << 41, -6} {
			if s.has(c) {
				t.Errorf("%s: has(%d) = true", name, c)
			}
		}
	}
}
