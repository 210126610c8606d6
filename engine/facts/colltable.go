package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// CollectiveStat is one row of the collectives table: the primary device's
// communication kernels in W of one kind and process group.
type CollectiveStat struct {
	// Kind is all_reduce, all_gather, reduce_scatter, all_to_all,
	// send_recv, broadcast, reduce or other.
	Kind string `json:"kind" expr:"kind"`
	// Group is the process group when the trace names it, else "".
	Group string `json:"group" expr:"group"`
	Count int64  `json:"count" expr:"count"`
	// Bytes sums the message sizes of the calls whose size is known (the
	// first input tensor of the host collective that launched the kernel,
	// record_shapes); SizedCount counts those calls. Nil when none is known.
	Bytes      *int64 `json:"bytes" expr:"bytes"`
	SizedCount int64  `json:"sized_count" expr:"sized_count"`
	// TimeUS is the summed kernel duration; ExposedUS the part of the
	// union of these kernels in W that no compute kernel overlaps.
	TimeUS    float64 `json:"time_us" expr:"time_us"`
	ExposedUS float64 `json:"exposed_us" expr:"exposed_us"`
	// AlgBWGBps is bytes / kernel time over the sized calls (GB/s, 1e9
	// bytes); BusBWGBps scales it by the NCCL tests' factor for the kind
	// and world_size n: all_reduce 2(n-1)/n; all_gather, reduce_scatter,
	// all_to_all (n-1)/n; broadcast, reduce, send_recv 1. Nil without sizes
	// (bus bandwidth also without world_size).
	AlgBWGBps *float64 `json:"algbw_gbps" expr:"algbw_gbps"`
	BusBWGBps *float64 `json:"busbw_gbps" expr:"busbw_gbps"`
}

// collectiveKind names the kind of a host collective call (nccl:all_reduce,
// c10d::allgather_, record_param_comms is unnamed) or of an NCCL/RCCL
// kernel (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv).
func collectiveKind(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "")
	switch {
	case strings.Contains(n, "allreduce"):
		return "all_reduce"
	case strings.Contains(n, "allgather"):
		return "all_gather"
	case strings.Contains(n, "reducescatter"):
		return "reduce_scatter"
	case strings.Contains(n, "alltoall"):
		return "all_to_all"
	case strings.Contains(n, "sendrecv"), strings.Contains(n, "send"), strings.Contains(n, "recv"):
		return "send_recv"
	case strings.Contains(n, "broadcast"):
		return "broadcast"
	case strings.Contains(n, "reduce"):
		return "reduce"
	}
	return ""
}

// busFactor is the NCCL tests' bus bandwidth factor (PERFORMANCE.md).
func busFactor(kind string, n int64) (float64, bool) {
	if n < 1 {
		return 0, false
	}
	r := float64(n)
	switch kind {
	case "all_reduce":
		return 2 * (r - 1) / r, true
	case "all_gather", "reduce_scatter", "all_to_all":
		return (r - 1) / r, true
	case "broadcast", "reduce", "send_recv":
		return 1, true
	}
	return 0, false
}

// hostColl is a host collective call with its kind and message size.
type hostColl struct {
	s, e  int64
	kind  string
	bytes int64 // 0: unknown
}

// collectiveTable fills CollectiveStats from the communication kernels of
// the primary device in W. A kernel's kind and size come from the innermost
// host collective (nccl:*, c10d::*, record_param_comms) around its launch
// call on the launching thread, else its kind from the kernel name.
func (d *deriver) collectiveTable(compute ivset) {
	if !d.hasGPU || len(d.f.Collectives) == 0 {
		return
	}
	evs := d.t.Events
	byThread := map[thread][]hostColl{}
	for i := range evs {
		e := &evs[i]
		if !isCPU(e) || !d.is(e, kCommCPU) {
			continue
		}
		h := hostColl{s: e.TS, e: e.End(), kind: collectiveKind(d.t.Name(e))}
		if sh, ok := d.t.ShapesOf(e); ok {
			h.bytes = firstTensorBytes(d.t.Str(sh.Dims), d.t.Str(sh.Types))
		}
		th := thread{e.PID, e.TID}
		byThread[th] = append(byThread[th], h)
	}
	for _, hs := range byThread {
		slices.SortFunc(hs, func(a, b hostColl) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(b.e, a.e)) })
	}
	type key struct{ kind, group string }
	rows := map[key]*CollectiveStat{}
	sizedNS := map[key]int64{}
	sets := map[key][]interval{}
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.Cat != trace.CatKernel || e.DeviceID() != d.primary || !d.is(e, kCommKernel) || !d.inWindow(e.TS) {
			continue
		}
		kind, bytes := "", int64(0)
		if e.Has&trace.HasCorrelation != 0 {
			if li, ok := d.launch.get(e.Correlation); ok {
				l := &evs[li]
				hs := byThread[thread{l.PID, l.TID}]
				// The innermost call containing the launch: the last to start
				// at or before it among those that contain it.
				k, _ := slices.BinarySearchFunc(hs, l.TS+1, func(h hostColl, ts int64) int { return cmp.Compare(h.s, ts) })
				for j := k - 1; j >= 0 && j >= k-64; j-- {
					h := hs[j]
					if h.e <= l.TS {
						continue
					}
					if kind == "" {
						kind = h.kind
					}
					if bytes == 0 {
						bytes = h.bytes
					}
					if kind != "" && bytes != 0 {
						break
					}
				}
			}
		}
		if kind == "" {
			kind = collectiveKind(d.t.Name(e))
		}
		if kind == "" {
			kind = "other"
		}
		k := key{kind, ""}
		r := rows[k]
		if r == nil {
			r = &CollectiveStat{Kind: kind}
			rows[k] = r
		}
		r.Count++
		r.TimeUS += float64(e.Dur) / 1e3
		if bytes > 0 {
			b := bytes
			if r.Bytes != nil {
				b += *r.Bytes
			}
			r.Bytes = &b
			r.SizedCount++
			sizedNS[k] += e.Dur
		}
		sets[k] = append(sets[k], interval{e.TS, e.End()})
	}
	win := ivset(d.window)
	for k, r := range rows {
		set := intersect(unionOf(sets[k]), win)
		r.ExposedUS = float64(set.total()-overlap(set, compute)) / 1e3
		if r.Bytes != nil && sizedNS[k] > 0 {
			size := float64(*r.Bytes)
			if k.kind == "all_gather" && d.f.WorldSize != nil {
				size *= float64(*d.f.WorldSize) // the NCCL tests' size is the gathered output
			}
			alg := size / float64(sizedNS[k]) // bytes per ns = GB/s
			r.AlgBWGBps = f64(alg)
			if d.f.WorldSize != nil {
				if fac, ok := busFactor(k.kind, *d.f.WorldSize); ok {
					r.BusBWGBps = f64(alg * fac)
				}
			}
		}
		d.f.CollectiveStats = append(d.f.CollectiveStats, *r)
	}
	slices.SortFunc(d.f.CollectiveStats, func(a, b CollectiveStat) int {
		return cmp.Or(cmp.Compare(b.TimeUS, a.TimeUS), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Group, b.Group))
	})
}

// firstTensorBytes is the size of the first tensor input of a
// record_shapes op: the product of its dims times its dtype's size; 0 when
// unknown.
func firstTensorBytes(dims, types string) int64 {
	ds := parseDims(dims)
	if len(ds) == 0 || len(ds[0]) == 0 {
		return 0
	}
	t, _, _ := strings.Cut(types, "|")
	sz := elemSize(t)
	if sz == 0 {
		return 0
	}
	n := int64(1)
	for _, v := range ds[0] {
		n *= v
	}
	return n * int64(sz)
}
