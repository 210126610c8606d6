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
