package facts

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// CollectiveStat is one row of the collectives table: the primary device's
// communication kernels in W of one kind and process group.
type CollectiveStat struct {
	// Kind is all_reduce, all_gather, reduce_scatter, all_to_all,
	// send_recv, broadcast, reduce or other.
	Kind string `json:"kind" expr:"kind"`
	// Group is the process group's name as c10d records it (args "Process
	// Group Name", or "Process Group ID" in PyTorch 2.2-2.3) when the trace
	// names it, else ""; GroupDesc its description ("default_pg", a
	// new_group name; "" when absent or "undefined"); GroupRanks its global
	// ranks as recorded ("[0, 1, 2, 3]"); GroupSize its size (args "Group
	// size", else world_size; 0 when neither is known).
	Group      string `json:"group" expr:"group"`
	GroupDesc  string `json:"group_desc" expr:"group_desc"`
	GroupRanks string `json:"group_ranks" expr:"group_ranks"`
	GroupSize  int64  `json:"group_size" expr:"group_size"`
	// IntraNode says whether the group lies inside one node, assuming
	// torchrun's placement (node = rank / the GPUs the trace lists in
	// deviceProperties): all of GroupRanks in one node, or without ranks a
	// job (world_size, else the group) no larger than one node. Nil
	// without deviceProperties or a group size.
	IntraNode *bool `json:"intra_node" expr:"intra_node"`
	Count     int64 `json:"count" expr:"count"`
	// Bytes sums the message sizes, in the NCCL tests' convention (the
	// larger of the input and output buffers: the gathered output of an
	// all-gather, the full input of a reduce-scatter), of the calls whose
	// size is known; SizedCount counts those calls. The size is the c10d
	// args' max(In msg nelems, Out msg nelems) x the dtype's size on the
	// kernel or its host record_param_comms, else the first input tensor of
	// the host collective around the launch (record_shapes; an all-gather's
	// input shard times the group size). Nil when no size is known.
	Bytes      *int64 `json:"bytes" expr:"bytes"`
	SizedCount int64  `json:"sized_count" expr:"sized_count"`
	// TimeUS is the summed kernel duration; ExposedUS the part of the
	// union of these kernels in W that no compute kernel overlaps.
	TimeUS    float64 `json:"time_us" expr:"time_us"`
	ExposedUS float64 `json:"exposed_us" expr:"exposed_us"`
	// AlgBWGBps is bytes / kernel time over the sized calls (GB/s, 1e9
	// bytes); BusBWGBps scales it by the NCCL tests' factor for the kind
	// and the group size n: all_reduce 2(n-1)/n; all_gather,
	// reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
	// Nil without sizes; bus bandwidth also nil for n < 2 (no traffic). A
	// kernel's time includes waiting for the group's last rank to arrive,
	// so one rank's bandwidth is a lower bound (RanksBusBWGBps is not).
	AlgBWGBps *float64 `json:"algbw_gbps" expr:"algbw_gbps"`
	BusBWGBps *float64 `json:"busbw_gbps" expr:"busbw_gbps"`
	// RanksBusBWGBps is the cross-rank bus bandwidth when several ranks of
	// the job are analysed together (facts.CrossRank): the largest of the
	// ranks' bus bandwidths for the same kind and group, since the rank
	// that arrived last waited least and its kernel time is the closest to
	// the transfer itself. RanksCount counts the ranks with the row. Nil
	// (0) for one trace.
	RanksBusBWGBps *float64 `json:"ranks_busbw_gbps" expr:"ranks_busbw_gbps"`
	RanksCount     int64    `json:"ranks_count" expr:"ranks_count"`
	// SizedTimeUS is the summed kernel time of the sized calls, the
	// denominator of the bandwidths.
	SizedTimeUS float64 `json:"sized_time_us" expr:"sized_time_us"`
}

// collectiveKind names the kind of a host collective call (nccl:all_reduce,
// c10d::allgather_, record_param_comms is unnamed) or of a collective
// kernel (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv).
func collectiveKind(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "")
	switch {
	case strings.Contains(n, "allreduce"),
		// the kernels of symm_mem's multimem_one_shot_all_reduce and of
		// the vLLM/SGLang custom all-reduce
		strings.Contains(n, "multimemoneshotreduce"), strings.Contains(n, "crossdevicereduce"):
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

// hostColl is a host collective call with its kind, message size (the
// NCCL tests' convention; 0: unknown) and c10d args.
type hostColl struct {
	s, e  int64
	kind  string
	bytes int64
	comm  *trace.CommArgs
}

// commElemSize is the size in bytes of a c10 ScalarType name, as the c10d
// "dtype" arg writes it; 0 when unknown.
func commElemSize(t string) int64 {
	switch t {
	case "Float", "Int", "UInt32", "ComplexHalf":
		return 4
	case "Double", "Long", "UInt64", "ComplexFloat":
		return 8
	case "Half", "BFloat16", "Short", "UInt16":
		return 2
	case "Byte", "Char", "Bool", "Float8_e4m3fn", "Float8_e5m2", "Float8_e4m3fnuz", "Float8_e5m2fnuz", "QInt8", "QUInt8":
		return 1
	case "ComplexDouble":
		return 16
	}
	return 0
}

// commBytes is the NCCL tests' message size of a collective from its c10d
// args: max(In msg nelems, Out msg nelems) x the dtype's size; 0 when
// unknown.
func (d *deriver) commBytes(c *trace.CommArgs) int64 {
	if c == nil || c.DType == 0 {
		return 0
	}
	n := max(c.InNelems, c.OutNelems)
	sz := commElemSize(d.t.Str(c.DType))
	if n <= 0 || sz == 0 || n > math.MaxInt64/sz {
		return 0
	}
	return n * sz
}

// collInfo is what one collective kernel is: its kind, size and group.
type collInfo struct {
	kind  string
	bytes int64
	comm  *trace.CommArgs // the c10d args naming the group, nil when none
}

// fill takes from c what ci still lacks.
func (d *deriver) fillColl(ci *collInfo, kind string, bytes int64, c *trace.CommArgs) {
	if ci.kind == "" {
		ci.kind = kind
	}
	if ci.bytes == 0 {
		ci.bytes = bytes
	}
	if ci.comm == nil && c != nil && (c.Group != 0 || c.GroupSize >= 0) {
		ci.comm = c
	}
}

func (ci *collInfo) done() bool { return ci.kind != "" && ci.bytes != 0 && ci.comm != nil }

// collectiveTable fills CollectiveStats from the communication kernels of
// the primary device in W. A kernel's kind, size and process group come
// from its own c10d args (PyTorch 2.1 and later record them on the
// kernel), then from the innermost host collective (nccl:*, c10d::*,
// record_param_comms) around its launch call on the launching thread, then
// its kind from the kernel name.
func (d *deriver) collectiveTable(compute ivset) {
	if !d.hasGPU || len(d.f.Collectives) == 0 {
		return
	}
	evs := d.t.Events
	byThread := map[thread][]hostColl{}
	for _, i := range d.rare {
		e := &evs[i]
		if !isCPU(e) || !d.is(e, kCommCPU) {
			continue
		}
		h := hostColl{s: e.TS, e: e.End(), kind: collectiveKind(d.t.Name(e))}
		if c, ok := d.t.CommOf(e); ok {
			if c.Collective != 0 && d.t.Str(c.Collective) == "wait" {
				continue // work.wait(): launches nothing, names no group
			}
			h.comm = &c
			if c.Collective != 0 {
				h.kind = collectiveKind(d.t.Str(c.Collective))
			}
			h.bytes = d.commBytes(&c)
		}
		if sh, ok := d.shapes.Of(e); ok && h.bytes == 0 {
			h.bytes = firstTensorBytes(d.t.Str(sh.Dims), d.t.Str(sh.Types))
			if h.kind == "all_gather" && h.bytes > 0 {
				if n := d.groupSize(h.comm); n > 0 {
					h.bytes *= n // the NCCL tests' size is the gathered output
				} else {
					h.bytes = 0
				}
			}
		}
		if h.kind == "" && h.bytes == 0 && h.comm == nil {
			continue // a wait or barrier: nothing to give a kernel
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
		var ci collInfo
		if c, ok := d.t.CommOf(e); ok {
			kind := ""
			if c.Collective != 0 {
				kind = collectiveKind(d.t.Str(c.Collective))
			}
			d.fillColl(&ci, kind, d.commBytes(&c), &c)
		}
		if !ci.done() && e.Has&trace.HasCorrelation != 0 {
			if li, ok := d.launch.get(e.Correlation); ok {
				l := &evs[li]
				hs := byThread[thread{l.PID, l.TID}]
				// The innermost call containing the launch: the last to start
				// at or before it among those that contain it.
				k, _ := slices.BinarySearchFunc(hs, l.TS+1, func(h hostColl, ts int64) int { return cmp.Compare(h.s, ts) })
				for j := k - 1; j >= 0 && j >= k-64 && !ci.done(); j-- {
					if h := hs[j]; h.e > l.TS {
						d.fillColl(&ci, h.kind, h.bytes, h.comm)
					}
				}
			}
		}
		if ci.kind == "" {
			ci.kind = collectiveKind(d.t.Name(e))
		}
		if ci.kind == "" {
			ci.kind = "other"
		}
		k := key{ci.kind, ""}
		if ci.comm != nil {
			k.group = d.t.Str(ci.comm.Group)
		}
		r := rows[k]
		if r == nil {
			r = &CollectiveStat{Kind: ci.kind, Group: k.group, GroupSize: d.groupSize(ci.comm)}
			if c := ci.comm; c != nil {
				if desc := d.t.Str(c.GroupDesc); desc != "undefined" {
					r.GroupDesc = desc
				}
				r.GroupRanks = d.t.Str(c.Ranks)
			}
			r.IntraNode = d.intraNode(r.GroupRanks, r.GroupSize)
			rows[k] = r
		}
		r.Count++
		r.TimeUS += float64(e.Dur) / 1e3
		if ci.bytes > 0 {
			b := ci.bytes
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
		r.SizedTimeUS = float64(sizedNS[k]) / 1e3
		r.AlgBWGBps, r.BusBWGBps = bandwidths(r.Kind, r.Bytes, r.SizedTimeUS, r.GroupSize)
		d.f.CollectiveStats = append(d.f.CollectiveStats, *r)
	}
	slices.SortFunc(d.f.CollectiveStats, func(a, b CollectiveStat) int {
		return cmp.Or(cmp.Compare(b.TimeUS, a.TimeUS), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Group, b.Group))
	})
}

// groupSize is a collective's group size: the c10d "Group size" arg, else
// the trace's world_size; 0 when neither is known.
func (d *deriver) groupSize(c *trace.CommArgs) int64 {
	if c != nil && c.GroupSize > 0 {
		return c.GroupSize
	}
	if d.f.WorldSize != nil && *d.f.WorldSize > 0 {
		return *d.f.WorldSize
	}
	return 0
}

// intraNode decides CollectiveStat.IntraNode for a group.
func (d *deriver) intraNode(ranks string, size int64) *bool {
	per := int64(len(d.t.Devices))
	if per == 0 || size <= 0 {
		return nil
	}
	if rs, ok := parseRanks(ranks); ok && int64(len(rs)) == size {
		node := rs[0] / per
		in := true
		for _, r := range rs {
			in = in && r/per == node
		}
		return &in
	}
	job := size
	if d.f.WorldSize != nil {
		job = max(job, *d.f.WorldSize)
	}
	in := job <= per
	return &in
}

// parseRanks reads a "Process Group Ranks" text ("[0, 1, 2]") as
// non-negative integers; false when it is not such a list.
func parseRanks(s string) ([]int64, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 3 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	var out []int64
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || v < 0 {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// bandwidths are the NCCL tests' algorithm and bus bandwidths (GB/s) of
// bytes moved in us microseconds of kernel time by a collective of kind
// over a group of n ranks; nil when unknown (bus bandwidth also for n < 2).
func bandwidths(kind string, bytes *int64, us float64, n int64) (alg, bus *float64) {
	if bytes == nil || us <= 0 {
		return nil, nil
	}
	a := float64(*bytes) / (us * 1e3) // bytes per ns = GB/s
	alg = f64(a)
	if n >= 2 {
		if fac, ok := busFactor(kind, n); ok {
			bus = f64(a * fac)
		}
	}
	return alg, bus
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
