package facts_test

import (
	"bytes"
	"flag"
	"math"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// update is accepted so that `go test ./... -update` works in every package.
var updateFlag = flag.Bool("update", false, "rewrite docs/FACTS.md")

func derive(t *testing.T, b *tracetest.Builder) *facts.Facts {
	t.Helper()
	tr, err := trace.Parse(bytes.NewReader(b.JSON()), "gen.json")
	if err != nil {
		t.Fatal(err)
	}
	return facts.Derive(tr, facts.DefaultConfig())
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func wantF(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || !near(*got, want) {
		t.Errorf("%s = %v, want %v", name, fmtp(got), want)
	}
}

func wantI(t *testing.T, name string, got *int64, want int64) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %v", name, fmtpi(got), want)
	}
}

func fmtp(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

func fmtpi(p *int64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// Busy time is an interval union: overlapping kernels on one stream count once.
func TestBusyIsUnion(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Launch(1, 2, "k1", 10, 20) // [10,30)
	b.Launch(3, 2, "k2", 20, 20) // [20,40) overlaps
	f := derive(t, b)
	wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.30)
	wantF(t, "gpu_idle_ratio", f.GPUIdleRatio, 0.70)
	wantI(t, "kernel_count", f.KernelCount, 2)
	wantF(t, "kernel_launches_per_ms", f.KernelLaunchesPerMS, 2/0.1)
}

// A step extends to the end of the GPU work it launched, never past the
// next step's start. The last step's GPU tail is capped, for the step
// statistics only, at the largest tail of the other steps (docs/ARCHITECTURE.md
// "Steps and their statistics").
func TestStepExtension(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Launch(50, 5, "long", 60, 90) // ends at 150
	b.Step(2, 120, 100)
	b.Launch(130, 5, "late", 200, 80) // ends at 280
	f := derive(t, b)
	if f.StepsCount != 2 || !near(f.WindowUS, 280) {
		t.Fatalf("steps %d window %v, want 2 and 280", f.StepsCount, f.WindowUS)
	}
	// Step 1 runs [0, 120): cut at step 2's start, a GPU tail of 20 us.
	// Step 2 runs [120, 280) in W, a tail of 60 us capped at 20: 120 us.
	st := f.StepTimeUS
	if !near(st.Max, 120) || !near(st.Mean, 120) || !near(st.P50, 120) || !near(st.P90, 120) {
		t.Errorf("step_time_us = %+v, want 120 for both steps", *st)
	}
	wantF(t, "step_time_cv", f.StepTimeCV, 0)
	wantF(t, "last_step_drain_us", f.LastStepDrainUS, 40)
}

// A single step keeps its GPU tail: there is no other step to cap it by.
func TestSingleStepKeepsDrain(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Launch(50, 5, "late", 150, 50) // ends at 200
	f := derive(t, b)
	if !near(f.StepTimeUS.Max, 200) {
		t.Errorf("step_time_us.max = %v, want 200", f.StepTimeUS.Max)
	}
	wantF(t, "last_step_drain_us", f.LastStepDrainUS, 0)
}

// Blocking copies are host syncs (docs/ARCHITECTURE.md "Why the GPU waits"): cudaMemcpy,
// hipMemcpyWithStream, and a cudaMemcpyAsync whose copy touches pageable
// memory. A pinned async copy is not.
func TestBlockingCopiesAreSyncs(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Memcpy(100, "DtoH", true, 110, 10, 4)  // .cpu() into pageable memory: sync
	b.Memcpy(200, "HtoD", false, 210, 10, 4) // pinned: asynchronous
	b.Runtime("hipMemcpyWithStream", 300, 10)
	b.Op("aten::_local_scalar_dense", 400, 50) // .item() ...
	b.Memcpy(410, "DtoH", true, 415, 5, 4)     // ... and its copy: one sync
	b.Launch(600, 5, "k", 610, 10)
	f := derive(t, b)
	wantF(t, "sync_per_step", f.SyncPerStep, 3)
}

// Nested syncs (aten::item -> _local_scalar_dense -> cudaStreamSynchronize)
// are one host sync.
func TestSyncOutermostOnly(t *testing.T) {
	b := tracetest.New()
	for k := 0; k < 2; k++ {
		s := float64(k) * 100
		b.Step(k, s, 100)
		b.Op("aten::item", s+10, 20)
		b.Op("aten::_local_scalar_dense", s+11, 18)
		b.Runtime("cudaStreamSynchronize", s+12, 16)
		b.Runtime("cudaDeviceSynchronize", s+50, 5)
	}
	f := derive(t, b)
	wantF(t, "sync_per_step", f.SyncPerStep, 2)
	if n := len(f.Examples["sync"]); n != 4 {
		t.Errorf("sync examples = %d, want 4", n)
	}
}

func TestDataloaderAndMemcpy(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 250)
	b.Memcpy(300, "HtoD", true, 310, 50, 4096)
	b.Memcpy(400, "HtoD", false, 410, 10, 1024)
	b.Memcpy(500, "DtoH", false, 510, 10, 8)
	b.Memcpy(600, "DtoD", false, 610, 10, 8)
	f := derive(t, b)
	wantF(t, "dataloader_time_ratio", f.DataloaderTimeRatio, 0.25)
	if f.DataloaderSingleProcess == nil || !*f.DataloaderSingleProcess {
		t.Errorf("dataloader_single_process = %v", f.DataloaderSingleProcess)
	}
	wantI(t, "memcpy_count", f.MemcpyCount, 4)
	wantI(t, "memcpy_htod_count", f.MemcpyHtoDCount, 2)
	wantI(t, "memcpy_dtoh_count", f.MemcpyDtoHCount, 1)
	wantI(t, "memcpy_dtod_count", f.MemcpyDtoDCount, 1)
	wantI(t, "memcpy_pageable_count", f.MemcpyPageableCount, 1)
	wantI(t, "memcpy_bytes", f.MemcpyBytes, 4096+1024+16)
	wantF(t, "memcpy_time_ratio", f.MemcpyTimeRatio, 0.08)
	wantF(t, "memcpy_per_step", f.MemcpyPerStep, 4)
	if f.KernelCount == nil || *f.KernelCount != 0 || f.ShortKernelRatio != nil {
		t.Errorf("kernel facts without kernels: count %v short %v", fmtpi(f.KernelCount), fmtp(f.ShortKernelRatio))
	}
}

func TestLaunchBoundAndShort(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 200)
	b.Launch(0, 10, "tiny", 12, 3) // launch 10 >= kernel 3: launch-bound, short
	b.Launch(20, 5, "big", 30, 50) // not
	b.GPU("kernel", "orphan", 100, 5, 0, nil)
	f := derive(t, b)
	wantI(t, "kernel_count", f.KernelCount, 3)
	wantF(t, "short_kernel_ratio", f.ShortKernelRatio, 2.0/3)
	wantF(t, "launch_bound_kernel_ratio", f.LaunchBoundKernelRatio, 0.5)
}

func TestNoStepsWindow(t *testing.T) {
	b := tracetest.New()
	b.Op("aten::mm", 100, 50)
	b.Launch(110, 5, "gemm", 120, 80) // last end 200
	b.Raw(map[string]any{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 1000})
	f := derive(t, b)
	if f.HasSteps || f.StepsCount != 0 || !near(f.WindowUS, 100) {
		t.Fatalf("window %v steps %d", f.WindowUS, f.StepsCount)
	}
	if f.StepTimeUS != nil || f.SyncPerStep != nil || f.KernelsPerStep != nil || f.DataloaderTimeRatio != nil {
		t.Errorf("per-step facts must be null without steps")
	}
	wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.8)
}

func TestCPUOnlyNulls(t *testing.T) {
	b := tracetest.New().Top("deviceProperties", nil)
	b.Step(1, 0, 100)
	b.Op("aten::mul", 10, 5)
	b.Op("aten::add_", 20, 5)
	b.Op("aten::relu", 30, 5)
	b.Op("aten::mm", 40, 5)
	f := derive(t, b)
	if f.HasGPU || f.GPUBusyRatio != nil || f.KernelCount != nil || f.MemcpyCount != nil || f.PrimaryDevice != nil || f.Device != nil {
		t.Errorf("GPU facts must be null in a CPU-only trace: %+v", f)
	}
	if f.ElementwiseChainCount != 1 || f.ElementwiseChainKernels != 3 || !near(f.ElementwiseChainTimeRatio, 0.15) {
		t.Errorf("cpu chains: %d chains %d ops ratio %v", f.ElementwiseChainCount, f.ElementwiseChainKernels, f.ElementwiseChainTimeRatio)
	}
}

func TestGPUChains(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	ew := "void at::native::vectorized_elementwise_kernel<4>"
	for i := 0; i < 4; i++ { // a chain of 4
		b.Launch(float64(i), 1, ew, 100+float64(i)*10, 5)
	}
	b.Memcpy(10, "DtoD", false, 145, 2, 8) // does not break the run
	b.Launch(20, 1, "gemm", 200, 50)       // breaks
	b.Launch(21, 1, ew, 300, 5)
	b.Launch(22, 1, ew, 310, 30) // too long: breaks
	b.Launch(23, 1, ew, 350, 5)
	f := derive(t, b)
	if f.ElementwiseChainCount != 1 || f.ElementwiseChainKernels != 4 || !near(f.ElementwiseChainTimeRatio, 0.02) {
		t.Errorf("gpu chains: %d chains %d kernels ratio %v", f.ElementwiseChainCount, f.ElementwiseChainKernels, f.ElementwiseChainTimeRatio)
	}
}

func TestDeviceAndDistributed(t *testing.T) {
	b := tracetest.New().Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 2, "world_size": 4})
	b.Step(1, 0, 100)
	b.Launch(1, 1, "k", 10, 10)
	f := derive(t, b)
	wantI(t, "rank", f.Rank, 2)
	wantI(t, "world_size", f.WorldSize, 4)
	wantI(t, "primary_device", f.PrimaryDevice, 0)
	if f.Device == nil || f.Device.Name != "NVIDIA A100-SXM4-80GB" || *f.Device.SMCount != 108 || *f.Device.ComputeMajor != 8 {
		t.Errorf("device = %+v", f.Device)
	}
}

func TestGraphReplayAndSyncTime(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	c := b.Runtime("cudaGraphLaunch", 10, 20)
	for i := 0; i < 3; i++ {
		b.GPU("kernel", "replayed", 40+float64(i)*10, 5, c, nil)
	}
	b.Launch(100, 5, "eager", 120, 5)
	b.Op("aten::item", 200, 100)
	b.Runtime("cudaStreamSynchronize", 210, 80)
	b.Memcpy(400, "HtoD", true, 410, 10, 8)
	b.Memcpy(500, "DtoH", true, 510, 10, 8)
	f := derive(t, b)
	wantF(t, "graph_launched_kernel_ratio", f.GraphLaunchedKernelRatio, 0.75)
	wantF(t, "launch_bound_kernel_ratio", f.LaunchBoundKernelRatio, 1)
	// aten::item (100 us) and the two pageable copies' cudaMemcpyAsync (5 us each).
	wantF(t, "sync_time_ratio", f.SyncTimeRatio, 0.11)
	wantI(t, "memcpy_pageable_count", f.MemcpyPageableCount, 2)
	wantI(t, "memcpy_pageable_htod_count", f.MemcpyPageableHtoDCount, 1)
}
