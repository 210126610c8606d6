package facts

import (
	"cmp"
	"slices"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// batchSize sets batch_size: per step, the leading dimension of the first
// tensor input (Input Dims, record_shapes) of the first aten operator on the
// step's thread that starts inside the step and after the step's DataLoader
// fetches on that thread end, the batch moving to the device or entering
// the model; the value most steps agree on (ties: the smaller). Null
// without steps or shapes.
func (d *deriver) batchSize() {
	if !d.t.RecordShapes {
		return
	}
	evs := d.t.Events
	type step struct {
		pid, tid trace.ID
		s, e     int64
		after    int64 // end of the step's last DataLoader fetch on its thread
		first    int   // the first candidate operator, -1 for none
		lead     int32 // its leading dimension
	}
	var steps []step
	for _, i := range d.stepIdx {
		e := &evs[i]
		steps = append(steps, step{pid: e.PID, tid: e.TID, s: e.TS, e: e.End(), after: e.TS, first: -1})
	}
	if len(steps) == 0 {
		return
	}
	slices.SortFunc(steps, func(a, b step) int { return cmp.Compare(a.s, b.s) })
	// Steps do not overlap: an event belongs to the latest step starting
	// at or before it, when it starts before that step's end on its thread.
	k := 0 // steps starting at or before the last event found: events come nearly in time order
	find := func(e *trace.Event) *step {
		if k > 0 && steps[k-1].s > e.TS || k < len(steps) && steps[k].s <= e.TS {
			k, _ = slices.BinarySearchFunc(steps, e.TS+1, func(s step, ts int64) int { return cmp.Compare(s.s, ts) })
		}
		if k == 0 {
			return nil
		}
		if s := &steps[k-1]; e.TS < s.e && s.pid == e.PID && s.tid == e.TID {
			return s
		}
		return nil
	}
	for _, i := range d.hot["dataloader"] { // DataLoader fetches starting in W
		if s := find(&evs[i]); s != nil {
			s.after = max(s.after, evs[i].End())
		}
	}
	for i := range evs {
		e := &evs[i]
		if e.Has&trace.HasLeadDim == 0 || !isCPU(e) || !d.is(e, kAten) {
			continue
		}
		if s := find(e); s != nil && e.TS >= s.after && (s.first < 0 || e.TS < evs[s.first].TS) {
			if sh, _ := d.shapes.Of(e); sh.LeadDim > 0 {
				s.first, s.lead = i, sh.LeadDim
			}
		}
	}
	votes := map[int64]int{}
	for _, s := range steps {
		if s.first >= 0 {
			votes[int64(s.lead)]++
		}
	}
	var best int64
	for v, n := range votes {
		if best == 0 || n > votes[best] || n == votes[best] && v < best {
			best = v
		}
	}
	if best > 0 {
		d.f.BatchSize = &best
	}
}
