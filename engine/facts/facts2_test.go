package facts_test

import (
	"fmt"

	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// One 1000 us step on the main thread (times in us):
//
//	[0,300)    DataLoader __next__ (cpu_op)
//	[300,310)  cudaLaunchKernel -> kernel A [320,520)
//	[520,620)  aten::item > cudaStreamSynchronize [530,610)
//	[620,800)  Optimizer.step#SGD.step (user_annotation)
//	             > aten::add_ [630,700) > cudaLaunchKernel [680,685) -> kernel B [710,760)
//	[800,1000) nothing recorded
func optimizerStep() *tracetest.Builder {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 300)
	b.Launch(300, 10, "kernel_a", 320, 200)
	b.Op("aten::item", 520, 100)
	b.Runtime("cudaStreamSynchronize", 530, 80)
	b.X("user_annotation", "Optimizer.step#SGD.step", 620, 180)
	b.Op("aten::add_", 630, 70)
	b.Launch(680, 5, "kernel_b", 710, 50)
	return b
}

func TestStepBreakdown(t *testing.T) {
	f := derive(t, optimizerStep())
	// kernel: A 200 + B 50 = 250. runtime: launches 10 + 5, sync 80 = 95.
	// dataloader 300. cpu_op: item [520,530)+[610,620) = 20, add_ 70 - 5 = 65 -> 85.
	// other: 1000 - 250 - 95 - 300 - 85 = 270.
	wantF(t, "step_kernel_ratio", f.StepKernelRatio, 0.25)
	wantF(t, "step_memcpy_ratio", f.StepMemcpyRatio, 0)
	wantF(t, "step_runtime_ratio", f.StepRuntimeRatio, 0.095)
	wantF(t, "step_dataloader_ratio", f.StepDataloaderRatio, 0.3)
	wantF(t, "step_cpu_op_ratio", f.StepCPUOpRatio, 0.085)
	wantF(t, "step_other_ratio", f.StepOtherRatio, 0.27)
	if len(f.Steps) != 1 || f.Steps[0].Name != "ProfilerStep#1" || !near(f.Steps[0].RolesUS["dataloader"], 300) {
		t.Errorf("steps = %+v", f.Steps)
	}
}

func TestIdleGapCauses(t *testing.T) {
	f := derive(t, optimizerStep())
	// Idle gaps: [0,320) [520,710) [760,1000) = 750 us, each charged
	// through the launch of the kernel that ends it (docs/ARCHITECTURE.md "Why the GPU waits").
	// [0,320): kernel_a, launched [300,310): dataloader [0,300) 300, launch
	// 10, queued [310,320) 10. [520,710): kernel_b, launched [680,685): sync
	// (item) [520,620) 100, optimizer [620,680) 60, launch 5, queued
	// [685,710) 25. [760,1000) is trailing: charged to the thread of the
	// last launch: optimizer [760,800) 40, untraced [800,1000) 200.
	wantF(t, "gpu_idle_ratio", f.GPUIdleRatio, 0.75)
	wantF(t, "gpu_idle_queued_ratio", f.GPUIdleQueuedRatio, 0.035)
	wantF(t, "gpu_idle_launch_ratio", f.GPUIdleLaunchRatio, 0.015)
	wantF(t, "gpu_idle_dataloader_ratio", f.GPUIdleDataloaderRatio, 0.3)
	wantF(t, "gpu_idle_sync_ratio", f.GPUIdleSyncRatio, 0.1)
	wantF(t, "gpu_idle_optimizer_ratio", f.GPUIdleOptimizerRatio, 0.1)
	wantF(t, "gpu_idle_cpu_op_ratio", f.GPUIdleCPUOpRatio, 0)
	wantF(t, "gpu_idle_untraced_ratio", f.GPUIdleUntracedRatio, 0.2)
	if c := f.IdleCulprits["sync"]; len(c) != 1 || c[0].Name != "aten::item" || c[0].Calls != 1 || !near(c[0].IdleUS, 100) {
		t.Errorf("sync culprits = %+v, want aten::item, 1 call, 100 us", c)
	}
	if len(f.Timeline) == 0 || f.Timeline[0].Kind != "dataloader" {
		t.Errorf("timeline starts %+v, want a dataloader gap", f.Timeline[:min(2, len(f.Timeline))])
	}
	var sum float64
	for _, s := range f.Timeline {
		sum += s.DurUS
	}
	if !near(sum, 1000) {
		t.Errorf("timeline covers %v us, want 1000", sum)
	}
}

func TestLaunchDelayAndOps(t *testing.T) {
	f := derive(t, optimizerStep())
	// Delays: A 320-310 = 10, B 710-685 = 25 -> mean 17.5, p90 10+0.9*15 = 23.5.
	d := f.LaunchDelayUS
	if d == nil || !near(d.Mean, 17.5) || !near(d.P50, 17.5) || !near(d.P90, 23.5) || !near(d.Max, 25) {
		t.Errorf("launch_delay_us = %+v", d)
	}
	ops := map[string]struct{ self, total, dev float64 }{}
	for _, o := range f.TopOps {
		ops[o.Name] = struct{ self, total, dev float64 }{o.SelfCPUUS, o.TotalCPUUS, o.SelfDeviceUS}
	}
	// aten::add_ launched kernel B (50 us); kernel A was launched outside any op.
	if o := ops["aten::add_"]; !near(o.self, 70) || !near(o.total, 70) || !near(o.dev, 50) {
		t.Errorf("aten::add_ = %+v", o)
	}
	if o := ops["aten::item"]; !near(o.self, 100) || o.dev != 0 {
		t.Errorf("aten::item = %+v", o)
	}
	// Optimizer: [620,800) = 0.18 of W, single-tensor (no _foreach_), 1 op.
	wantF(t, "optimizer_time_ratio", f.OptimizerTimeRatio, 0.18)
	if f.OptimizerSingleTensor == nil || !*f.OptimizerSingleTensor {
		t.Errorf("optimizer_single_tensor = %v", f.OptimizerSingleTensor)
	}
	wantF(t, "optimizer_ops_per_step", f.OptimizerOpsPerStep, 1)
	if f.OptimizerClass == nil || *f.OptimizerClass != "SGD" {
		t.Errorf("optimizer_class = %v, want SGD", f.OptimizerClass)
	}
	if f.ZeroGradFillPerStep != nil {
		t.Errorf("zero_grad_fill_per_step = %v without zero_grad", *f.ZeroGradFillPerStep)
	}
	if len(f.Labels) != 1 || f.Labels[0].Name != "Optimizer.step#SGD.step" || !near(f.Labels[0].Ratio, 0.18) {
		t.Errorf("labels = %+v", f.Labels)
	}
	if len(f.TopKernels) != 2 || f.TopKernels[0].Name != "kernel_a" || !near(f.TopKernels[0].TotalUS, 200) {
		t.Errorf("top kernels = %+v", f.TopKernels)
	}
}

// Three 1000 us steps with communication, matmuls with dtypes, memory
// samples, zero_grad fills, a multi-tensor optimizer and a repeated op.
func TestCommPrecisionMemoryOptimizer(t *testing.T) {
	b := tracetest.New().Top("profile_memory", 1)
	for k := 0; k < 3; k++ {
		b.Step(k+1, float64(k)*1000, 1000)
	}
	typed := func(name, dtype string, ts, dur float64) {
		b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": name, "pid": b.Pid, "tid": b.Tid, "ts": ts, "dur": dur,
			"args": map[string]any{"Input type": []string{dtype, "", "Scalar"}, "Input Dims": []any{[]int{2, 2}}}})
	}
	// fp32 GEMM under aten::linear > aten::addmm: kernel [100,300).
	typed("aten::linear", "float", 10, 80)
	typed("aten::addmm", "float", 20, 60)
	b.Launch(30, 5, "volta_sgemm_128x64_nn", 100, 200)
	// NCCL all-reduce [200,500): 100 us overlaps the GEMM.
	b.GPU("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 200, 300, 0, nil)
	// bf16 GEMM: kernel [620,720).
	typed("aten::mm", "c10::BFloat16", 600, 100)
	b.Launch(610, 5, "sm80_xmma_gemm_bf16bf16_bf16f32", 620, 100)
	// zero_grad fills two gradients, the second recorded twice, one
	// zero_ inside the other, as the 2020 profiler did; AdamW runs a
	// foreach kernel.
	b.X("user_annotation", "Optimizer.zero_grad#AdamW.zero_grad", 900, 50)
	b.Op("aten::zero_", 905, 5)
	b.Op("aten::zero_", 915, 5)
	b.Op("aten::zero_", 916, 3)
	b.X("user_annotation", "Optimizer.step#AdamW.step", 950, 40)
	b.Op("aten::_foreach_add_", 955, 5)
	// 150 aten::stack calls of 2 us in step 2.
	for i := 0; i < 150; i++ {
		b.Op("aten::stack", 1100+float64(i)*4, 2)
	}
	// Allocated bytes: 100 in step 1, 200 in step 2, 300 in step 3.
	for k, ts := range []float64{50, 1500, 2500} {
		b.Raw(map[string]any{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": b.Pid, "tid": b.Tid, "ts": ts,
			"args": map[string]any{"Bytes": 100, "Total Allocated": 100 * (k + 1), "Device Id": 0, "Device Type": 1}})
	}
	f := derive(t, b)
	// comm 300 of W 3000; exposed 200; overlap 100/300.
	wantF(t, "comm_kernel_time_ratio", f.CommKernelTimeRatio, 0.1)
	wantF(t, "exposed_comm_ratio", f.ExposedCommRatio, 200.0/3000)
	wantF(t, "comm_overlap_ratio", f.CommOverlapRatio, 1.0/3)
	// Matmul kernel time 300, of which fp32 200. Tensor cores: only the bf16
	// GEMM (100) of 600 us of kernels.
	wantF(t, "fp32_matmul_time_ratio", f.FP32MatmulTimeRatio, 2.0/3)
	wantF(t, "tensor_core_kernel_time_ratio", f.TensorCoreKernelTimeRatio, 1.0/6)
	// Peak 300 bytes of 80 GiB; 3 allocations in 3 steps; +100 B per step.
	wantI(t, "memory_peak_allocated_bytes", f.MemoryPeakAllocatedBytes, 300)
	wantF(t, "memory_peak_ratio", f.MemoryPeakRatio, 300.0/85899345920)
	wantF(t, "memory_allocs_per_step", f.MemoryAllocsPerStep, 1)
	wantF(t, "memory_growth_bytes_per_step", f.MemoryGrowthBytesPerStep, 100)
	// Two fills in three steps; the step uses a multi-tensor kernel.
	wantF(t, "zero_grad_fill_per_step", f.ZeroGradFillPerStep, 2.0/3)
	if f.OptimizerSingleTensor == nil || *f.OptimizerSingleTensor {
		t.Errorf("optimizer_single_tensor = %v, want false", f.OptimizerSingleTensor)
	}
	if f.OptimizerClass == nil || *f.OptimizerClass != "AdamW" {
		t.Errorf("optimizer_class = %v, want AdamW", f.OptimizerClass)
	}
	// aten::stack: 150 calls / 3 steps, 300 us of 3000.
	wantF(t, "repeated_small_op_calls_per_step", f.RepeatedSmallOpCallsPerStep, 50)
	wantF(t, "repeated_small_op_time_ratio", f.RepeatedSmallOpTimeRatio, 0.1)
	if ex := f.Examples["repeated_small_op"]; len(ex) != 1 || ex[0].Name != "aten::stack" {
		t.Errorf("repeated op example %+v", ex)
	}
	// Equal steps: slowest/median 1, first step a third of W.
	wantF(t, "step_time_max_over_p50", f.StepTimeMaxOverP50, 1)
	wantF(t, "first_step_time_ratio", f.FirstStepTimeRatio, 1.0/3)
	if !f.HasMemory || !f.HasShapes {
		t.Errorf("has_memory %v has_shapes %v", f.HasMemory, f.HasShapes)
	}
}

// Launch calls with no GPU event: CUDA activity was not captured.
func TestGPUActivityMissing(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Op("aten::mm", 10, 50)
	b.Runtime("cudaLaunchKernel", 20, 5)
	f := derive(t, b)
	if f.HasGPU || !f.GPUActivityMissing {
		t.Errorf("has_gpu %v gpu_activity_missing %v", f.HasGPU, f.GPUActivityMissing)
	}
	wantF(t, "orphan_launch_ratio", f.OrphanLaunchRatio, 1)
	if f.TraceBytesPerStep == nil || *f.TraceBytesPerStep <= 0 {
		t.Errorf("trace_bytes_per_step = %v", f.TraceBytesPerStep)
	}
}

// A GPU job profiled with ProfilerActivity.CPU alone: deviceProperties
// list its GPUs and nccl: spans its collectives, but there is no GPU event
// and no launch. An MTIA trace lists its own deviceProperties and is not a
// GPU job; a CPU-only trace has neither.
func TestGPUActivityMissingWithoutLaunches(t *testing.T) {
	gpus := []any{
		map[string]any{"id": 0, "name": "NVIDIA A100-PG509-200", "computeMajor": 8, "computeMinor": 0},
		map[string]any{"id": 1, "name": "NVIDIA A100-PG509-200", "computeMajor": 8, "computeMinor": 0},
	}
	b := tracetest.New()
	b.Top("deviceProperties", gpus)
	b.Step(1, 0, 100)
	b.Op("aten::mm", 10, 20)
	b.X("user_annotation", "nccl:all_to_all", 40, 20)
	f := derive(t, b)
	if f.HasGPU || !f.GPUActivityMissing {
		t.Fatalf("has_gpu %v gpu_activity_missing %v", f.HasGPU, f.GPUActivityMissing)
	}
	if r := f.GPUActivityMissingReason; r == nil || *r != "2 NVIDIA A100-PG509-200 GPUs in deviceProperties, 1 nccl: collective span" {
		t.Errorf("gpu_activity_missing_reason = %v", r)
	}
	if f.OrphanLaunchRatio != nil {
		t.Errorf("orphan_launch_ratio = %v without launches", *f.OrphanLaunchRatio)
	}

	cpu := tracetest.New()
	cpu.Top("deviceProperties", []any{})
	cpu.Step(1, 0, 100)
	cpu.Op("aten::mm", 10, 20)
	cpu.X("user_annotation", "gloo:all_reduce", 40, 20)
	if f := derive(t, cpu); f.GPUActivityMissing || f.GPUActivityMissingReason != nil {
		t.Errorf("CPU-only trace: gpu_activity_missing %v", f.GPUActivityMissing)
	}

	mtia := tracetest.New()
	mtia.Top("deviceProperties", []any{map[string]any{"id": 17, "name": "ARTEMIS"}})
	mtia.Step(1, 0, 100)
	mtia.X("mtia_runtime", "mtiaLaunchKernel", 40, 5)
	mtia.Raw(map[string]any{"ph": "X", "cat": "mtia_ccp_events", "name": "kernel_x", "pid": 17, "tid": 1, "ts": 50, "dur": 30})
	if f := derive(t, mtia); f.GPUActivityMissing {
		t.Errorf("MTIA trace: gpu_activity_missing %v (%v)", f.GPUActivityMissing, f.GPUActivityMissingReason)
	}
}

// A with_stack trace: two .item() syncs run inside train() (train.py line
// 30), which <module> (line 1) calls; a DataLoader fetch runs directly in
// train(). Each function on the stack counts each hot event once.
func TestPythonSites(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	py := func(name string, ts, dur float64) {
		b.Raw(map[string]any{"ph": "X", "cat": "python_function", "name": name, "pid": b.Pid, "tid": b.Tid, "ts": ts, "dur": dur})
	}
	py("train.py(1): <module>", 0, 1000)
	py("train.py(30): train", 5, 990)
	py("torch/_tensor.py(40): item", 100, 30)
	b.Op("aten::item", 105, 20)
	b.Op("aten::item", 300, 10)
	b.Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 500, 50)
	b.Op("aten::item", 1500, 10) // outside every frame (and W)
	f := derive(t, b)
	got := map[string]facts.PySite{}
	for _, s := range f.PythonSites {
		got[s.Kind+" "+s.File+":"+fmt.Sprint(s.Line)+" "+s.Func] = s
	}
	for key, want := range map[string]struct {
		n  int64
		us float64
	}{
		"sync train.py:30 train":         {2, 30},
		"sync train.py:1 <module>":       {2, 30},
		"sync torch/_tensor.py:40 item":  {1, 20},
		"dataloader train.py:30 train":   {1, 50},
		"dataloader train.py:1 <module>": {1, 50},
	} {
		if s, ok := got[key]; !ok || s.Count != want.n || !near(s.TimeUS, want.us) {
			t.Errorf("%s = %+v, want %d events, %v us", key, s, want.n, want.us)
		}
	}
	if len(got) != 5 {
		t.Errorf("sites %v", got)
	}
}

// The 2021 [memory] format has Bytes but no Total Allocated: the peak is
// the running sum of Bytes on the primary device.
func TestMemory2021Format(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Launch(10, 5, "k", 20, 100)
	mem := func(ts float64, bytes, dev int) {
		b.Raw(map[string]any{"ph": "i", "s": "t", "name": "[memory]", "pid": 100, "tid": 1, "ts": ts,
			"args": map[string]any{"Device Type": 1, "Device Id": dev, "Bytes": bytes}})
	}
	mem(100, 1<<20, 0)
	mem(200, 2<<20, 0)
	mem(300, -(1 << 20), 0)
	mem(400, 8<<20, -1) // CPU memory: another device
	mem(500, 1<<20, 0)
	f := derive(t, b)
	if f.MemoryPeakAllocatedBytes == nil || *f.MemoryPeakAllocatedBytes != 3<<20 {
		t.Fatalf("memory_peak_allocated_bytes = %v, want %d", fmtpi(f.MemoryPeakAllocatedBytes), 3<<20)
	}
	wantF(t, "memory_allocs_per_step", f.MemoryAllocsPerStep, 3)
}

// Without deviceProperties, the compute capability is bounded from below
// by the architecture the library kernels are named for (volta_, ampere_,
// sm90_, ...), the newest named; an older prefix (cuDNN runs maxwell_
// kernels on Pascal) bounds nothing, and deviceProperties always win.
func TestDeviceArchFromKernels(t *testing.T) {
	for _, tt := range []struct {
		kernels      []string
		props        bool
		major, minor int64 // -1: no device
		from         string
	}{
		{[]string{"volta_sgemm_128x64_nn", "void at::native::elementwise_kernel"}, false, 7, 0, "volta_"},
		{[]string{"volta_sgemm_128x64_nn", "ampere_sgemm_64x32_tn"}, false, 8, 0, "ampere_"},
		{[]string{"void sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"}, false, 9, 0, "sm90_"},
		{[]string{"maxwell_scudnn_128x32_relu_small_nn", "void at::native::vectorized_elementwise_kernel"}, false, -1, -1, ""},
		{[]string{"volta_sgemm_128x64_nn"}, true, 8, 0, ""}, // the A100 of deviceProperties
	} {
		b := tracetest.New()
		if !tt.props {
			b.Top("deviceProperties", nil)
		}
		for k, name := range tt.kernels {
			at := float64(k) * 100
			b.Launch(at, 5, name, at+10, 50)
		}
		f := derive(t, b)
		d := f.Device
		switch {
		case tt.major < 0 && d != nil:
			t.Errorf("%v: device %+v, want none", tt.kernels, d)
		case tt.major >= 0 && (d == nil || d.ComputeMajor == nil || *d.ComputeMajor != tt.major || *d.ComputeMinor != tt.minor || d.ComputeFrom != tt.from):
			t.Errorf("%v: device %+v, want %d.%d from %q", tt.kernels, d, tt.major, tt.minor, tt.from)
		}
	}
}

// An operator called inside a call of itself (aten::copy_ converting the
// dtype inside aten::copy_) counts once in its totals, in the outer call:
// summing both (as key_averages does) would total more than the window.
func TestOpTableNestedSameName(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Op("aten::copy_", 100, 500)
	b.Op("aten::copy_", 150, 400)
	b.Op("aten::copy_", 700, 100)
	f := derive(t, b)
	for _, o := range f.TopOps {
		if o.Name != "aten::copy_" {
			continue
		}
		if o.Calls != 3 || !near(o.TotalCPUUS, 600) || !near(o.SelfCPUUS, 600) {
			t.Errorf("aten::copy_ = %+v, want 3 calls, total 500 + 100 us, self 100 + 400 + 100 us", o)
		}
		return
	}
	t.Fatalf("no aten::copy_ row in %+v", f.TopOps)
}

// A ProfilerStep#N inside another (nested, or written twice) is part of
// it: three steps of 10 ms with a 4 ms kernel each stay three steps, W
// 30 ms, busy 40% (a nested copy made four steps and cut W to 23 ms).
func TestNestedProfilerStepIsPartOfIt(t *testing.T) {
	for _, dup := range [][2]float64{{12000, 1000}, {10000, 10000}} {
		b := tracetest.New()
		for i := 0; i < 3; i++ {
			s := float64(i) * 10000
			b.Step(i, s, 10000)
			b.Launch(s+500, 10, "gemm", s+1000, 4000)
		}
		b.Step(1, dup[0], dup[1])
		f := derive(t, b)
		if f.StepsCount != 3 || !near(f.WindowUS, 30000) {
			t.Errorf("copy at %v: steps %d, window %v us; want 3 and 30000", dup, f.StepsCount, f.WindowUS)
		}
		wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.4)
	}
}

// TestOptimizerFusedClass: a Fused* optimizer class (apex, DeepSpeed,
// torchrec) runs its own multi-tensor kernels, so its per-parameter
// bookkeeping ops do not make it single-tensor; the same step under SGD
// does.
func TestOptimizerFusedClass(t *testing.T) {
	for _, c := range []struct {
		class  string
		single bool
	}{{"SGD", true}, {"FusedAdam", false}} {
		b := tracetest.New()
		b.Step(1, 0, 1000)
		b.X("user_annotation", "Optimizer.step#"+c.class+".step", 620, 180)
		b.Op("aten::add_", 630, 70)
		b.Launch(680, 5, "kernel_b", 710, 50)
		f := derive(t, b)
		if f.OptimizerSingleTensor == nil || *f.OptimizerSingleTensor != c.single {
			t.Errorf("%s: optimizer_single_tensor = %v, want %v", c.class, f.OptimizerSingleTensor, c.single)
		}
	}
}
