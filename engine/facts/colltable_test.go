package facts_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// TestCollectiveTable: an all-reduce of 25 MB (bf16) launched inside
// nccl:all_reduce on 8 ranks, 1 ms of kernel time of which 0.4 ms overlaps
// compute: algbw 25 GB/s, busbw 25 x 2(8-1)/8 = 43.75 GB/s; a SendRecv
// kernel without a host call is send_recv with no size.
func TestCollectiveTable(t *testing.T) {
	b := tracetest.New().Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 0, "world_size": 8})
	b.Step(1, 0, 5000)
	b.Raw(map[string]any{"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": b.Pid, "tid": b.Tid,
		"ts": 100, "dur": 50, "args": map[string]any{"Input Dims": []any{[]any{12_500_000}}, "Input type": []any{"c10::BFloat16"}}})
	b.Launch(110, 5, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*)", 1000, 1000)
	b.Launch(120, 5, "gemm_kernel", 1600, 1000)
	b.Launch(200, 5, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)", 3000, 100)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	if len(f.CollectiveStats) != 2 {
		t.Fatalf("collective_stats = %+v", f.CollectiveStats)
	}
	ar := f.CollectiveStats[0]
	if ar.Kind != "all_reduce" || ar.Count != 1 || ar.Bytes == nil || *ar.Bytes != 25_000_000 || ar.TimeUS != 1000 || ar.ExposedUS != 600 {
		t.Errorf("all_reduce row = %+v", ar)
	}
	if ar.AlgBWGBps == nil || math.Abs(*ar.AlgBWGBps-25) > 1e-9 || ar.BusBWGBps == nil || math.Abs(*ar.BusBWGBps-43.75) > 1e-9 {
		t.Errorf("bandwidth = %v / %v, want 25 / 43.75 GB/s", fmtp(ar.AlgBWGBps), fmtp(ar.BusBWGBps))
	}
	sr := f.CollectiveStats[1]
	if sr.Kind != "send_recv" || sr.Bytes != nil || sr.AlgBWGBps != nil || sr.ExposedUS != 100 {
		t.Errorf("send_recv row = %+v", sr)
	}
}

// TestCollectiveTableDLRM: on the shared DLRM rank-0 trace the SendRecv
// kernels launched inside nccl:all_to_all are all-to-alls and the
// all-reduces carry the sizes of their nccl:all_reduce inputs (float).
func TestCollectiveTableDLRM(t *testing.T) {
	dir := factstest.SharedTraces(t)
	raw, err := os.ReadFile(filepath.Join(dir, "param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json"))
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	tr, err := trace.Parse(bytes.NewReader(raw), "worker0")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	got := map[string]facts.CollectiveStat{}
	for _, c := range f.CollectiveStats {
		got[c.Kind] = c
	}
	a2a, ar := got["all_to_all"], got["all_reduce"]
	if a2a.Count != 5 || a2a.Bytes == nil || *a2a.Bytes != (6144+6144+384+3392)*4+24*8 {
		t.Errorf("all_to_all = %+v", a2a)
	}
	if ar.Count != 3 || ar.Bytes == nil || *ar.Bytes != (394241+112+226960)*4 || ar.BusBWGBps == nil {
		t.Errorf("all_reduce = %+v", ar)
	}
	if ar.BusBWGBps != nil && math.Abs(*ar.BusBWGBps-*ar.AlgBWGBps*2*7/8) > 1e-9 {
		t.Errorf("busbw %v is not algbw x 2(n-1)/n", *ar.BusBWGBps)
	}
}

// commArgs are the c10d args PyTorch 2.1+ records on a collective kernel.
func commArgs(coll string, group, desc string, size int, ranks string, in, out int, dtype string) map[string]any {
	return map[string]any{"Collective name": coll, "Process Group Name": group, "Process Group Description": desc,
		"Group size": size, "Process Group Ranks": ranks, "In msg nelems": in, "Out msg nelems": out, "dtype": dtype,
		"In split size": "[]", "Out split size": "[]"}
}

// TestCollectiveTableGroups: FSDP's all-gather and reduce-scatter on a
// 4-rank shard group and DDP's all-reduce on the 8-rank default group are
// separate rows, sized from the kernels' c10d args (nelems x dtype size, the
// larger buffer): all-gather 4 x 1M bf16 elements out = 8 MB in 0.5 ms is
// 16 GB/s algbw, busbw x 3/4 = 12; reduce-scatter 8 MB in (float16) in 1 ms
// is 8 GB/s, busbw 6; all-reduce 25 MB (6.25M float) in 1 ms is 25 GB/s,
// busbw x 2 x 7/8 = 43.75. The group of 4 ranks on 8 listed devices lies
// in one node; ranks [6..9] straddle two.
func TestCollectiveTableGroups(t *testing.T) {
	b := tracetest.New().Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 0, "world_size": 16})
	devs := []any{}
	for i := range 8 {
		devs = append(devs, map[string]any{"id": i, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "computeMajor": 9})
	}
	b.Top("deviceProperties", devs)
	b.Step(1, 0, 10000)
	ag := commArgs("_allgather_base", "3", "undefined", 4, "[0, 1, 2, 3]", 1<<20, 4<<20, "BFloat16")
	rs := commArgs("_reduce_scatter_base", "3", "undefined", 4, "[0, 1, 2, 3]", 4<<20, 1<<20, "Half")
	ar := commArgs("allreduce", "0", "default_pg", 8, "[6, 7, 8, 9, 10, 11, 12, 13]", 6_250_000, 6_250_000, "Float")
	b.GPU("kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100, 500, b.Runtime("cudaLaunchKernel", 50, 5), ag)
	b.GPU("kernel", "ncclDevKernel_ReduceScatter_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1000, 1000, b.Runtime("cudaLaunchKernel", 60, 5), rs)
	b.GPU("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 3000, 1000, b.Runtime("cudaLaunchKernel", 70, 5), ar)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	got := map[string]facts.CollectiveStat{}
	for _, c := range f.CollectiveStats {
		got[c.Kind+"/"+c.Group] = c
	}
	for _, w := range []struct {
		key         string
		size        int64
		bytes       int64
		alg, bus    float64
		desc, ranks string
		intra       bool
	}{
		{"all_gather/3", 4, 8 << 20, 8 << 20 / 500e3, 8 << 20 / 500e3 * 3 / 4, "", "[0, 1, 2, 3]", true},
		{"reduce_scatter/3", 4, 8 << 20, 8 << 20 / 1000e3, 8 << 20 / 1000e3 * 3 / 4, "", "[0, 1, 2, 3]", true},
		{"all_reduce/0", 8, 25_000_000, 25, 43.75, "default_pg", "[6, 7, 8, 9, 10, 11, 12, 13]", false},
	} {
		r, ok := got[w.key]
		if !ok {
			t.Errorf("no row %s in %+v", w.key, f.CollectiveStats)
			continue
		}
		if r.GroupSize != w.size || r.Bytes == nil || *r.Bytes != w.bytes || r.GroupDesc != w.desc || r.GroupRanks != w.ranks || r.SizedCount != 1 {
			t.Errorf("%s = %+v", w.key, r)
		}
		if r.AlgBWGBps == nil || math.Abs(*r.AlgBWGBps-w.alg) > 1e-9 || r.BusBWGBps == nil || math.Abs(*r.BusBWGBps-w.bus) > 1e-9 {
			t.Errorf("%s bandwidth = %v / %v, want %v / %v GB/s", w.key, fmtp(r.AlgBWGBps), fmtp(r.BusBWGBps), w.alg, w.bus)
		}
		if r.IntraNode == nil || *r.IntraNode != w.intra {
			t.Errorf("%s intra_node = %v, want %v", w.key, r.IntraNode, w.intra)
		}
	}
	if f.DevicePeak == nil || f.DevicePeak.LinkBandwidth != 450e9 {
		t.Errorf("device peak link = %+v, want H100 NVLink 450 GB/s per direction", f.DevicePeak)
	}
}

// TestCollectiveTableHostArgs: a kernel without c10d args takes its kind,
// size and group from the record_param_comms around its launch (PyTorch
// 2.0-era traces record them only on the host op); a group of one rank has
// no bus bandwidth.
func TestCollectiveTableHostArgs(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 5000)
	a := commArgs("allreduce", "0", "default_pg", 1, "[0]", 1000, 1000, "Float")
	a["External id"] = 9
	b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": b.Pid, "tid": b.Tid, "ts": 100, "dur": 50, "args": a})
	b.Launch(110, 5, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 1000, 1)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	if len(f.CollectiveStats) != 1 {
		t.Fatalf("collective_stats = %+v", f.CollectiveStats)
	}
	r := f.CollectiveStats[0]
	if r.Kind != "all_reduce" || r.Group != "0" || r.GroupSize != 1 || r.Bytes == nil || *r.Bytes != 4000 || r.AlgBWGBps == nil || *r.AlgBWGBps != 4 || r.BusBWGBps != nil {
		t.Errorf("row = %+v", r)
	}
}

// TestCrossRankCollectiveBW: the cross-rank bus bandwidth of a row is the
// largest rank's (the last to arrive waited least); a row only one rank
// has gets none.
func TestCrossRankCollectiveBW(t *testing.T) {
	row := func(kind, group string, bus float64) facts.CollectiveStat {
		return facts.CollectiveStat{Kind: kind, Group: group, BusBWGBps: &bus}
	}
	r0 := &facts.Facts{WindowUS: 1000, CollectiveStats: []facts.CollectiveStat{row("all_reduce", "0", 40), row("all_gather", "3", 5)}}
	r1 := &facts.Facts{WindowUS: 1000, CollectiveStats: []facts.CollectiveStat{row("all_reduce", "0", 120)}}
	out := facts.CrossRank([]*facts.Facts{r0, r1})
	r0.ApplyCrossRank(out[0])
	ar, ag := r0.CollectiveStats[0], r0.CollectiveStats[1]
	if ar.RanksBusBWGBps == nil || *ar.RanksBusBWGBps != 120 || ar.RanksCount != 2 {
		t.Errorf("all_reduce cross-rank = %v (%d ranks), want 120 GB/s over 2", fmtp(ar.RanksBusBWGBps), ar.RanksCount)
	}
	if ag.RanksBusBWGBps != nil {
		t.Errorf("all_gather on one rank got cross-rank %v", *ag.RanksBusBWGBps)
	}
}

// TestCollectiveTableSharedGroups: on the shared traces that record c10d
// args, rows carry the process group and c10d sizes: the 2-rank HTA NCCL
// trace (PyTorch 2.1: args on the kernels) splits all-reduce and broadcast
// on default_pg (broadcasts of 53120 floats and of 53 longs, three times);
// the 8-rank B200 vLLM trace has one all-gather on group 3 of 201088
// bf16 elements out. Expected values come from the traces' args.
func TestCollectiveTableSharedGroups(t *testing.T) {
	dir := factstest.SharedTraces(t)
	cases := []struct {
		path, key, desc string
		size, count     int64
		bytes           int64
	}{
		{"hta/nccl_parser_config/nccl_data.json.gz", "all_reduce/0", "default_pg", 2, 15, 306684384},
		{"hta/nccl_parser_config/nccl_data.json.gz", "broadcast/0", "default_pg", 2, 6, 3 * (53120*4 + 53*8)},
		{"tracelens/tests/traces/b200/eager_trace.json.gz", "all_gather/3", "", 8, 1, 201088 * 2},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.path))
			if err != nil {
				t.Skipf("skipping: %v", err)
			}
			tr, err := trace.Parse(bytes.NewReader(raw), c.path)
			if err != nil {
				t.Fatal(err)
			}
			f := facts.Derive(tr, facts.DefaultConfig())
			for _, r := range f.CollectiveStats {
				if r.Kind+"/"+r.Group != c.key {
					continue
				}
				if r.GroupDesc != c.desc || r.GroupSize != c.size || r.Count != c.count || r.Bytes == nil || *r.Bytes != c.bytes || r.BusBWGBps == nil {
					t.Errorf("row = %+v", r)
				}
				return
			}
			t.Errorf("no row %s in %+v", c.key, f.CollectiveStats)
		})
	}
}

// TestLookupNamelessDevice: a device with an empty name (vLLM's ROCm
// image) is the MI300X by gfx942, 304 CUs and 192 GB; other counts match
// no row.
func TestLookupNamelessDevice(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	mi300x := &facts.Device{Name: "", ComputeMajor: i(9), ComputeMinor: i(4), SMCount: i(304), TotalMemoryBytes: i(206141652992)}
	if p := facts.LookupDeviceProps(mi300x); p == nil || p.Name != "AMD Instinct MI300X" || p.LinkBandwidth != 448e9 {
		t.Errorf("nameless MI300X = %+v", p)
	}
	mi300a := &facts.Device{Name: "", ComputeMajor: i(9), ComputeMinor: i(4), SMCount: i(228), TotalMemoryBytes: i(137438953472)}
	if p := facts.LookupDeviceProps(mi300a); p != nil {
		t.Errorf("nameless 228-CU device matched %+v", p)
	}
}

// TestSingleRankComm: a world_size 1 job that ran kernels and no
// collective has measured-zero communication and an empty collectives
// table; without distributedInfo the job may be one rank of many, so the
// communication facts stay null.
func TestSingleRankComm(t *testing.T) {
	for _, single := range []bool{true, false} {
		b := tracetest.New()
		if single {
			b.Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 0, "world_size": 1})
		}
		b.Step(1, 0, 1000)
		b.Launch(10, 5, "gemm_kernel", 100, 500)
		tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
		if err != nil {
			t.Fatal(err)
		}
		f := facts.Derive(tr, facts.DefaultConfig())
		if single && (f.CommKernelTimeRatio == nil || *f.CommKernelTimeRatio != 0 || f.ExposedCommRatio == nil || f.CollectiveStats == nil || len(f.CollectiveStats) != 0 || f.CommOverlapRatio != nil) {
			t.Errorf("world_size 1: comm %v, exposed %v, table %v, overlap %v", fmtp(f.CommKernelTimeRatio), fmtp(f.ExposedCommRatio), f.CollectiveStats, fmtp(f.CommOverlapRatio))
		}
		if !single && (f.CommKernelTimeRatio != nil || f.CollectiveStats != nil) {
			t.Errorf("no distributedInfo: comm %v, table %v", fmtp(f.CommKernelTimeRatio), f.CollectiveStats)
		}
	}
}

// TestCollectiveTableSymmetricMemory: tensor parallelism in vLLM and
// SGLang all-reduces through PyTorch's symmetric memory
// (symm_mem::multimem_all_reduce_ launching multimem_all_reduce_kernel) or
// its own custom all-reduce (cross_device_reduce_1stage), not NCCL: both
// are communication, in the collectives table as all-reduces, and the
// compute kernel beside them stays compute.
func TestCollectiveTableSymmetricMemory(t *testing.T) {
	b := tracetest.New().Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 0, "world_size": 8})
	b.Step(1, 0, 5000)
	b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": "symm_mem::multimem_all_reduce_", "pid": b.Pid, "tid": b.Tid,
		"ts": 100, "dur": 50, "args": map[string]any{"Input Dims": []any{[]any{1024, 2048}}, "Input type": []any{"c10::BFloat16"}}})
	b.Launch(110, 5, "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)", 1000, 400)
	b.Launch(200, 5, "gemm_kernel", 1500, 1000)
	b.Launch(300, 5, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", 3000, 100)
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Derive(tr, facts.DefaultConfig())
	if len(f.CollectiveStats) != 1 {
		t.Fatalf("collective_stats = %+v, want one all_reduce row", f.CollectiveStats)
	}
	ar := f.CollectiveStats[0]
	if ar.Kind != "all_reduce" || ar.Count != 2 || ar.TimeUS != 500 || ar.Bytes == nil || *ar.Bytes != 1024*2048*2 {
		t.Errorf("all_reduce row = %+v, Bytes %v", ar, fmtpi(ar.Bytes))
	}
	if f.CommKernelTimeRatio == nil || math.Abs(*f.CommKernelTimeRatio-0.1) > 1e-9 {
		t.Errorf("comm_kernel_time_ratio = %v, want 500 us of 5 ms", fmtp(f.CommKernelTimeRatio))
	}
	if f.TopKernelName == nil || *f.TopKernelName != "gemm_kernel" {
		t.Errorf("top_kernel_name = %v, want the GEMM", f.TopKernelName != nil && *f.TopKernelName != "")
	}
}
