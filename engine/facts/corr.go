package facts

import (
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// corrIndex maps a correlation id to the index in Trace.Events of the
// runtime/driver call that carries it (the first in file order).
//
// CUDA and HIP correlation ids count up from a per-process start, shared
// with other CUPTI/roctracer records, so the calls in a trace hold one id
// in 1 to 16 of their range (measured on the shared traces: 1.0 to 16.4).
// A dense table indexed by id - lo then answers each lookup with one load,
// at 4 bytes a slot; sparser ids fall back to a map.
type corrIndex struct {
	lo    int64
	dense []int32 // event index + 1; 0 = absent
	m     map[int64]int
}

// denseSlack is how many table slots per call a dense index may spend
// (64 bytes a call at most, less than the call's own Event).
const denseSlack = 16

// newCorrIndex indexes the runtime/driver calls (calls: their indexes in
// evs) that carry a correlation id.
func newCorrIndex(evs []trace.Event, calls []int) *corrIndex {
	x := &corrIndex{}
	lo, span, n := corrRange(evs, calls)
	if n > 0 && span < uint64(denseSlack*n+1024) && len(evs) < 1<<31-1 {
		x.lo, x.dense = lo, hugemem.Make[int32](int(span+1), int(span+1))
	} else {
		x.m = make(map[int64]int, n)
	}
	for _, i := range calls {
		e := &evs[i]
		if e.Has&trace.HasCorrelation == 0 {
			continue
		}
		if j, ok := x.get(e.Correlation); ok && evs[j].Index < e.Index {
			continue
		}
		if x.dense != nil {
			x.dense[e.Correlation-x.lo] = int32(i + 1)
		} else {
			x.m[e.Correlation] = i
		}
	}
	return x
}

// corrRange returns the smallest correlation id among evs[i] for i in
// idx, the distance to the largest, and how many carry one.
func corrRange(evs []trace.Event, idx []int) (lo int64, span uint64, n int) {
	var hi int64
	for _, i := range idx {
		e := &evs[i]
		if e.Has&trace.HasCorrelation == 0 {
			continue
		}
		if n == 0 || e.Correlation < lo {
			lo = e.Correlation
		}
		if n == 0 || e.Correlation > hi {
			hi = e.Correlation
		}
		n++
	}
	return lo, uint64(hi - lo), n
}

// get returns the event index of the call with correlation id c.
func (x *corrIndex) get(c int64) (int, bool) {
	if x.dense == nil {
		i, ok := x.m[c]
		return i, ok
	}
	k := uint64(c - x.lo)
	if k >= uint64(len(x.dense)) || x.dense[k] == 0 {
		return 0, false
	}
	return int(x.dense[k]) - 1, true
}

// corrSet is a set of correlation ids: a bitmap over their range when
// that costs at most 8 bytes an id, else a map.
type corrSet struct {
	lo   int64
	bits []uint64
	m    map[int64]struct{}
}

// newCorrSet holds the correlation ids of evs[i] for i in idx that carry
// one.
func newCorrSet(evs []trace.Event, idx []int) *corrSet {
	s := &corrSet{}
	lo, span, n := corrRange(evs, idx)
	if n > 0 && span/64 < uint64(n) {
		s.lo, s.bits = lo, make([]uint64, span/64+1)
	} else {
		s.m = make(map[int64]struct{}, n)
	}
	for _, i := range idx {
		if e := &evs[i]; e.Has&trace.HasCorrelation != 0 {
			if s.bits != nil {
				k := uint64(e.Correlation - s.lo)
				s.bits[k/64] |= 1 << (k % 64)
			} else {
				s.m[e.Correlation] = struct{}{}
			}
		}
	}
	return s
}

func (s *corrSet) has(c int64) bool {
	if s.bits == nil {
		_, ok := s.m[c]
		return ok
	}
	k := uint64(c - s.lo)
	return k/64 < uint64(len(s.bits)) && s.bits[k/64]&(1<<(k%64)) != 0
}
