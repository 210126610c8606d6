package reports

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
	"github.com/stepdoctor/stepdoctor/rules"
)

func f64(x float64) *float64 { return &x }
func i64(x int64) *int64     { return &x }
func bp(x bool) *bool        { return &x }

const dataloaderDoc = `The GPU waits for the next batch while the main process loads and
collates it.

## How to fix

Load batches in worker processes and pin host memory:

` + "```python" + `
loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True,
                    persistent_workers=True, prefetch_factor=4)
` + "```" + `

| setting | start with |
|---|---|
| num_workers | CPU cores / GPUs |
| pin_memory | True |

See the [DataLoader docs](https://pytorch.org/docs/stable/data.html).
`

// gpuTraining is a rank of a distributed GPU training run with several
// findings, evidence and example events.
func gpuTraining() *engine.Result {
	f := &facts.Facts{
		SchemaVersion: facts.SchemaVersion,
		HasGPU:        true, HasSteps: true, HasShapes: true, HasStack: false, HasMemory: false,
		Rank: i64(0), WorldSize: i64(8),
		// 25 MB all-reduce at 12 GB/s bus bandwidth on 8 ranks: algbw 12 x 8/14.
		CollectiveStats: []facts.CollectiveStat{
			{Kind: "all_reduce", Group: "default_pg", Count: 40, Bytes: i64(40 * 25_000_000), SizedCount: 40, TimeUS: 145_833.3, ExposedUS: 60_000, AlgBWGBps: f64p(6.857), BusBWGBps: f64p(12)},
			{Kind: "send_recv", Count: 4, TimeUS: 900, ExposedUS: 900},
		},
		PrimaryDevice: i64(0),
		Device: &facts.Device{
			ID: 0, Name: "NVIDIA H100 80GB HBM3",
			ComputeMajor: i64(9), ComputeMinor: i64(0), SMCount: i64(132), TotalMemoryBytes: i64(85031714816),
		},
		StepsCount:             20,
		WindowUS:               812403.25,
		StepTimeUS:             &facts.StepStats{Mean: 40620.16, P50: 38911.5, P90: 51200.75, Max: 66012},
		StepTimeCV:             f64(0.1834),
		GPUBusyRatio:           f64(0.4962),
		GPUIdleRatio:           f64(0.5038),
		GPUIdleDataloaderRatio: f64(0.2130),
		GPUIdleSyncRatio:       f64(0.0390),
		GPUIdleOptimizerRatio:  f64(0.0510),
		GPUIdleLaunchRatio:     f64(0.0330),
		GPUIdleQueuedRatio:     f64(0.0200),
		GPUIdleWarmupRatio:     f64(0),
		GPUIdleRuntimeRatio:    f64(0),
		GPUIdlePythonRatio:     f64(0),
		GPUIdleCPUOpRatio:      f64(0.0380),
		GPUIdleUntracedRatio:   f64(0.1098),
		DevicePeak: &facts.DevicePeak{Name: "NVIDIA H100 SXM", BF16FLOPS: 989e12, FP16FLOPS: 989e12, TF32FLOPS: 494e12, FP32FLOPS: 67e12,
			MemBandwidth: 3.35e12, ComputeUnits: 132, Source: "NVIDIA H100 datasheet"},
		RooflineOps: []facts.RooflineOp{
			{Name: "aten::mm", Kind: "gemm", Shapes: "[8192,4096],[4096,4096]", DType: "bf16", Calls: 400, KernelUS: 120000, KernelShare: 0.31,
				TimeRatio: 0.148, FLOPs: 2.75e11, Bytes: 1.3e8, FLOPSPerS: 9.2e14 * 0.5, BytesPerS: 2.2e11, Intensity: 2115, Bound: "compute",
				PeakFLOPSPerS: 989e12, PeakDType: "bf16", PeakRatio: f64(0.465), RooflineRatio: f64(0.465)},
			{Name: "aten::_scaled_dot_product_flash_attention", Kind: "attention_fwd", Shapes: "[8,16,4096,128],[8,16,4096,128],[8,16,4096,128]<script>", DType: "bf16", Calls: 80, KernelUS: 60000, KernelShare: 0.15,
				TimeRatio: 0.074, FLOPs: 2.2e11, Bytes: 4.0e8, FLOPSPerS: 2.9e14, BytesPerS: 5.3e11, Intensity: 550, Bound: "compute",
				PeakFLOPSPerS: 989e12, PeakDType: "bf16", PeakRatio: f64(0.293), RooflineRatio: f64(0.293)},
			{Name: "aten::layer_norm", Kind: "norm", Shapes: "[8,4096,4096]", DType: "bf16", Calls: 160, KernelUS: 9000, KernelShare: 0.02,
				TimeRatio: 0.011, FLOPs: 1.3e9, Bytes: 5.4e8, FLOPSPerS: 2.3e13, BytesPerS: 9.6e12, Intensity: 2.4, Bound: "memory",
				PeakFLOPSPerS: 989e12, PeakDType: "bf16"},
		},
		KernelCount:               i64(18240),
		KernelsPerStep:            f64(912),
		KernelLaunchesPerMS:       f64(22.452),
		ShortKernelRatio:          f64(0.6712),
		LaunchBoundKernelRatio:    f64(0.2451),
		MemcpyCount:               i64(120),
		MemcpyPerStep:             f64(6),
		MemcpyHtoDCount:           i64(80),
		MemcpyDtoHCount:           i64(40),
		MemcpyDtoDCount:           i64(0),
		MemcpyPageableCount:       i64(80),
		MemcpyBytes:               i64(1610612736),
		MemcpyTimeRatio:           f64(0.0412),
		SyncPerStep:               f64(2),
		DataloaderTimeRatio:       f64(0.2403),
		DataloaderSingleProcess:   bp(true),
		ElementwiseChainCount:     310,
		ElementwiseChainKernels:   1420,
		ElementwiseChainTimeRatio: 0.0587,
		Examples: map[string][]facts.EventRef{
			"step":       {{Name: "ProfilerStep#7", TSUS: 1712345678901234.5, OffsetUS: 245000.125, DurUS: 66012, PID: "1234", TID: "1234"}},
			"dataloader": {{Name: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TSUS: 1712345678650000, OffsetUS: 1012.5, DurUS: 18003.2, PID: "1234", TID: "1234"}},
		},
	}
	withSeries(f)
	return &engine.Result{
		SchemaVersion: engine.ResultSchemaVersion,
		About: &engine.About{
			Command:  "stepdoctor analyze --rules team-rules --baseline log/run0/ -o report.md log/run1/",
			RulePack: "builtin sha256:0123456789ab", RuleDirs: []string{"team-rules"}, Config: ".stepdoctor.yaml",
		},
		Baseline: &engine.Baseline{Path: "log/run0/", MaxRegression: 0.1, Pairs: []engine.BaselinePair{{
			Baseline: "log/run0/worker0.1712340000.pt.trace.json.gz", Trace: "log/run1/worker0.1712345678.pt.trace.json.gz", Warnings: []string{},
			Steps: &engine.StepComparison{
				Before:   engine.StepSide{Steps: 8, MedianUS: 71300, TrimmedMeanUS: 71420, MeanUS: 71500},
				After:    engine.StepSide{Steps: 8, MedianUS: 66010, TrimmedMeanUS: 66200, MeanUS: 66300},
				LogRatio: math.Log(71300.0 / 66010), SpeedUp: 71300.0 / 66010, Band: 0.0208, Measured: true, Verdict: engine.VerdictFaster,
			},
			Noise:   0.021,
			SpeedUp: f64(1.08), Regressions: []string{},
		}}, Unpaired: []string{}},
		Traces: []*engine.TraceResult{{
			Input: engine.Input{Path: "log/run1/worker0.1712345678.pt.trace.json.gz", Bytes: 48234112, Compressed: true},
			Facts: f,
			Findings: []rules.Finding{
				{
					Rule: "dataloader-bottleneck", Title: "DataLoader stalls the training loop",
					Severity: rules.SeverityHigh, Category: "input-pipeline",
					Message:    "DataLoader takes 24.0% of step time in a single process (_SingleProcessDataLoaderIter); the GPU is idle 50.4% of the window.",
					Impact:     0.2403,
					Confidence: rules.Confirmed,
					Evidence: []rules.Evidence{
						{Name: "dataloader_time_ratio", Value: 0.2403, Unit: "ratio"},
						{Name: "gpu_idle_ratio", Value: 0.5038, Unit: "ratio"},
						{Name: "step_time_us.mean", Value: 40620.16, Unit: "us"},
					},
					Examples: []facts.EventRef{
						{Name: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TSUS: 1712345678650000, OffsetUS: 1012.5, DurUS: 18003.2, PID: "1234", TID: "1234"},
						{Name: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TSUS: 1712345678691234.25, OffsetUS: 42246.75, DurUS: 9120.4, PID: "1234", TID: "1234"},
					},
					Doc:        dataloaderDoc,
					References: []string{"https://pytorch.org/docs/stable/data.html#multi-process-data-loading", "PyTorch performance tuning guide, section 1"},
				},
				{
					Rule: "pageable-memcpy", Title: "Host-to-device copies from pageable memory",
					Severity: rules.SeverityMedium, Category: "memory-transfer",
					Message:    "80 of 120 memcpys (66.7%) copy from pageable host memory: Memcpy HtoD (Pageable -> Device).",
					Impact:     0.031,
					Confidence: rules.Confirmed,
					Evidence: []rules.Evidence{
						{Name: "memcpy_pageable_count", Value: 80, Unit: "count"},
						{Name: "memcpy_per_step", Value: 6, Unit: "per_step"},
						{Name: "memcpy_bytes", Value: 1610612736, Unit: "bytes"},
					},
					Examples: []facts.EventRef{
						{Name: "Memcpy HtoD (Pageable -> Device)", TSUS: 1712345678660012.125, OffsetUS: 11024.625, DurUS: 812.5, PID: "0", TID: "7"},
					},
					Doc:        "Pass `pin_memory=True` to the DataLoader and copy with `tensor.to(device, non_blocking=True)`.",
					References: []string{"https://pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers"},
				},
				{
					Rule: "elementwise-chains", Title: "Chains of tiny elementwise kernels",
					Severity: rules.SeverityLow, Category: "kernel-efficiency",
					Message:    "310 chains of 1420 short elementwise kernels take 5.9% of the window; e.g. void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
					Impact:     0.0412,
					Confidence: rules.Likely,
					Evidence: []rules.Evidence{
						{Name: "elementwise_chain_count", Value: 310, Unit: "count"},
						{Name: "elementwise_chain_time_ratio", Value: 0.0587, Unit: "ratio"},
						{Name: "kernel_launches_per_ms", Value: 22.452, Unit: "per_ms"},
						{Name: "short_kernel_threshold", Value: 10, Unit: "us"},
					},
					Examples: []facts.EventRef{
						{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", TSUS: 1712345678700100, OffsetUS: 51112.5, DurUS: 3.2, PID: "0", TID: "7"},
						{Name: "void at::native::unrolled_elementwise_kernel<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, ...)", TSUS: 1712345678700104.5, OffsetUS: 51117, DurUS: 2.9, PID: "0", TID: "7"},
						{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, ...)", TSUS: 1712345678700109, OffsetUS: 51121.5, DurUS: 4.1, PID: "0", TID: "7"},
					},
					Doc: "Fuse pointwise ops with `torch.compile(model)`:\n\n```python\nmodel = torch.compile(model)\n```\n\n![fusion diagram](https://example.com/fusion.png)\n",
					References: []string{
						"https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html",
					},
				},
				{
					Rule: "host-sync", Title: "Host synchronisations inside the step",
					Severity: rules.SeverityInfo, Category: "host-overhead",
					Message:    "2.0 host syncs per step (aten::item -> cudaStreamSynchronize).",
					Impact:     0.0,
					Confidence: rules.Likely,
					Evidence:   []rules.Evidence{{Name: "sync_per_step", Value: 2, Unit: "per_step"}},
				},
			},
			NotEvaluated: []rules.NotEvaluated{
				{Rule: "memory-fragmentation", Title: "Allocator fragmentation", Missing: []string{"has_memory"}, Hint: "re-profile with profile_memory=True"},
			},
			Health: trace.Health{EventsRead: 412332, EventsKept: 412330, Dropped: 2, Diagnostics: []trace.Diagnostic{
				{Kind: trace.DiagDropped, Reason: "zero_ts_sentinel", Message: "complete event with ts 0 in a trace with later events", Offset: 1048576, Count: 2},
			}},
		}},
	}
}

// cpuOnly is a CPU-only trace without steps: GPU and step facts are null,
// several rules could not be evaluated.
func cpuOnly() *engine.Result {
	f := &facts.Facts{
		SchemaVersion: facts.SchemaVersion,
		HasGPU:        false, HasSteps: false, HasShapes: false, HasStack: true, HasMemory: false,
		StepsCount:                0,
		WindowUS:                  5234.5,
		ElementwiseChainCount:     3,
		ElementwiseChainKernels:   11,
		ElementwiseChainTimeRatio: 0.021,
		SyncPerStep:               nil,
		DataloaderTimeRatio:       f64(0),
	}
	return &engine.Result{
		SchemaVersion: engine.ResultSchemaVersion,
		Traces: []*engine.TraceResult{{
			Input: engine.Input{Path: "cpu_infer.json", Bytes: 81920},
			Facts: f,
			Findings: []rules.Finding{{
				Rule: "no-profiler-steps", Title: "No ProfilerStep spans",
				Severity: rules.SeverityInfo, Category: "profiling-setup",
				Message:    "The trace has no ProfilerStep#N spans, so per-step figures are unavailable; the window is the whole trace (5.23 ms).",
				Impact:     0,
				Confidence: rules.Confirmed,
				Doc:        "Call `prof.step()` once per iteration inside `with torch.profiler.profile(...) as prof:`.",
			}},
			NotEvaluated: []rules.NotEvaluated{
				{Rule: "gpu-idle", Title: "GPU idle while the host works", Missing: []string{"gpu_idle_ratio"}, Hint: "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a GPU run"},
				{Rule: "launch-bound", Title: "Kernel launches dominate", Missing: []string{"launch_bound_kernel_ratio", "kernel_count"}, Hint: "profile with ProfilerActivity.CUDA"},
				{Rule: "step-variance", Title: "Unstable step time", Missing: []string{"step_time_cv"}, Hint: "call prof.step() every iteration"},
				{Rule: "host-sync", Title: "Host synchronisations inside the step", Missing: []string{"sync_per_step"}},
			},
			Health: trace.Health{EventsRead: 1203, EventsKept: 1203},
		}},
	}
}

// repaired is a truncated, damaged trace the reader repaired: partial
// facts, diagnostics of every kind, and no findings.
func repaired() *engine.Result {
	f := &facts.Facts{
		SchemaVersion: facts.SchemaVersion,
		HasGPU:        true, HasSteps: true,
		PrimaryDevice:       i64(1),
		StepsCount:          3,
		WindowUS:            99.5,
		StepTimeUS:          &facts.StepStats{Mean: 33.1666, P50: 30, P90: 38.4, Max: 39.5},
		StepTimeCV:          f64(0),
		GPUBusyRatio:        f64(0.9),
		GPUIdleRatio:        f64(0.1),
		KernelCount:         i64(12),
		KernelsPerStep:      f64(4),
		KernelLaunchesPerMS: f64(120.6),
		ShortKernelRatio:    f64(1),
		MemcpyCount:         i64(0),
		MemcpyBytes:         i64(0),
	}
	return &engine.Result{
		SchemaVersion: engine.ResultSchemaVersion,
		Traces: []*engine.TraceResult{{
			Input: engine.Input{Path: "broken/rank3.json", Bytes: 7310},
			Facts: f,
			Health: trace.Health{
				EventsRead: 40, EventsKept: 31, Dropped: 9, Repaired: true,
				Diagnostics: []trace.Diagnostic{
					{Kind: trace.DiagRepair, Reason: "truncated", Message: "input ends inside the traceEvents array; closed it", Offset: 7310, Count: 1},
					{Kind: trace.DiagRepair, Reason: "trailing_comma", Message: "trailing comma before ]", Offset: 5120, Count: 3},
					{Kind: trace.DiagRepair, Reason: "nan_token", Message: "NaN token read as null", Offset: 2048, Count: 2},
					{Kind: trace.DiagDropped, Reason: "negative_dur", Message: "X event with negative dur", Offset: 1999, Count: 7},
					{Kind: trace.DiagDropped, Reason: "absurd_dur", Message: "event lasting more than 7 days", Offset: 3001, Count: 2},
					{Kind: trace.DiagWarning, Reason: "unmatched_e", Message: "E event without a matching B", Offset: -1, Count: 1},
				},
			},
		}},
	}
}

// hostile plants script and markup in every string a trace or rule can
// carry, in two traces.
const (
	xssScript = "<script>alert(1)</script>"
	xssImg    = "<img src=x onerror=alert(1)>"
)

func hostile() *engine.Result {
	evil := xssScript + " | `tick` *x* _y_ [l](javascript:alert(1)) " + xssImg
	ev := facts.EventRef{Name: evil, TSUS: 1, OffsetUS: 2, DurUS: 3, PID: xssImg, TID: xssScript}
	f := &facts.Facts{
		HasGPU: true, HasSteps: true, StepsCount: 1, WindowUS: 10,
		Device:       &facts.Device{Name: evil},
		GPUBusyRatio: f64(0.5), GPUIdleRatio: f64(0.5),
		StepTimeUS: &facts.StepStats{Mean: 10, P50: 10, P90: 10, Max: 10},
		Examples:   map[string][]facts.EventRef{"short_kernel": {ev}},
		Steps: []facts.StepBreakdown{
			{Name: evil, DurUS: 10, RolesUS: map[string]float64{"kernel": 4, evil: 6}},
			{Name: "ProfilerStep#" + xssScript, DurUS: 10, RolesUS: map[string]float64{"kernel": 10}},
		},
		Timeline:   []facts.TimelineSpan{{OffsetUS: 0, DurUS: 5, Kind: "busy"}, {OffsetUS: 5, DurUS: 5, Kind: evil}},
		TopKernels: []facts.KernelStat{{Name: evil, Count: 1, TotalUS: 5, MeanUS: 5, MaxUS: 5}},
		TopOps:     []facts.OpStat{{Name: evil, Calls: 1, SelfCPUUS: 3, TotalCPUUS: 3}},
		Memory: []facts.MemoryDevice{{Device: evil, DeviceID: 0, Events: 2, PeakAllocatedBytes: 2048, PeakOffsetUS: 5, PeakOp: evil,
			PeakReservedBytes: i64(4096), FragmentationRatio: f64(0.5), MaxReservedBytes: i64(4096), HasReserved: true,
			Curve: []facts.MemoryPoint{{OffsetUS: 1, AllocatedBytes: 1024, ReservedBytes: 4096}, {OffsetUS: 5, AllocatedBytes: 2048, ReservedBytes: 4096}},
			Steps: []facts.MemoryStep{{Step: evil, OffsetUS: 0, DurUS: 10, Allocs: 2, PeakAllocatedBytes: 2048, EndAllocatedBytes: 2048}}}},
		Labels:  []facts.LabelStat{{Name: evil, Calls: 1, TotalUS: 4, GPUUS: 2, Kernels: 1, GPUSpanUS: f64(3)}},
		Modules: []facts.LabelStat{{Name: evil, Path: evil + "/" + evil, Depth: 1, Calls: 1, TotalUS: 4, GPUUS: 2, Kernels: 1}},
		PhaseBreakdowns: []facts.PhaseBreakdown{{Phase: evil, Spans: 1, TimeUS: 10, WindowRatio: 1, GPUBusyRatio: 0.4,
			RolesUS: map[string]float64{"kernel": 4, evil: 6}}},
		CollectiveStats: []facts.CollectiveStat{{Kind: evil, Group: evil, GroupDesc: evil, GroupRanks: evil, GroupSize: 2, Count: 1, TimeUS: 1}},
	}
	tr := &engine.TraceResult{
		Input: engine.Input{Path: "runs/" + evil + ".json"},
		Facts: f,
		Findings: []rules.Finding{{
			Rule: "x" + xssScript, Title: evil, Severity: rules.Severity(xssImg), Category: evil,
			Message: "kernel " + evil + " is short\nnew line # heading\n- list", Impact: 0.5, Confidence: rules.Confidence(xssScript),
			Evidence: []rules.Evidence{{Name: evil, Value: 1, Unit: xssImg}},
			Examples: []facts.EventRef{ev},
			Doc: "raw " + xssScript + " and " + xssImg + "\n\n" + xssScript + "\n\n<img src=\"x\" onerror=\"alert(2)\">\n\n" +
				"[click](javascript:alert(3)) ![pic](javascript:alert(4)) ![pic2](http://example.com/x.png)\n\n</details>\n",
			References: []string{"javascript:alert(5)", evil, "https://example.com/ok?a=<b>"},
		}},
		NotEvaluated: []rules.NotEvaluated{{Rule: evil, Title: evil, Missing: []string{evil}, Hint: evil}},
		Health: trace.Health{Repaired: true, Diagnostics: []trace.Diagnostic{
			{Kind: trace.DiagKind(xssImg), Reason: evil, Message: evil, Offset: 3, Count: 1},
		}},
	}
	return &engine.Result{SchemaVersion: 1, Traces: []*engine.TraceResult{tr, tr}, Baseline: &engine.Baseline{
		Path: "base/" + evil, MaxRegression: 0.1, Pairs: []engine.BaselinePair{{
			Baseline: evil, Trace: tr.Input.Path, Warnings: []string{evil}, Regressions: []string{evil},
		}},
	}}
}

// huge is far larger than a PR comment allows: many ranks, each with many
// findings, examples and diagnostics.
func huge() *engine.Result {
	r := &engine.Result{SchemaVersion: 1}
	for rank := 0; rank < 16; rank++ {
		base := gpuTraining().Traces[0]
		base.Input.Path = fmt.Sprintf("log/worker%d.pt.trace.json", rank)
		base.Facts.Rank = i64(int64(rank))
		var fs []rules.Finding
		for k := 0; k < 40; k++ {
			f := base.Findings[k%len(base.Findings)]
			f.Rule = fmt.Sprintf("%s-%d", f.Rule, k)
			for e := 0; e < 30; e++ {
				f.Examples = append(f.Examples, f.Examples...)
				if len(f.Examples) > 30 {
					break
				}
			}
			fs = append(fs, f)
		}
		base.Findings = fs
		for d := 0; d < 200; d++ {
			base.Health.Diagnostics = append(base.Health.Diagnostics, trace.Diagnostic{
				Kind: trace.DiagRepair, Reason: fmt.Sprintf("r%d", d), Message: "something odd here", Offset: int64(d * 100), Count: d,
			})
		}
		r.Traces = append(r.Traces, base)
	}
	return r
}

// withSeries adds hand-made chart data to the gpuTraining facts: 20 steps
// of ~40 ms whose first quarter waits on the DataLoader, a GPU timeline with
// idle gaps of every cause, and kernel and operator tables.
func withSeries(f *facts.Facts) {
	var off float64
	for i := 0; i < 20; i++ {
		dl := 9000 + float64(i%4)*900
		k := 18000 + float64(i%3)*1200
		if i == 7 {
			k += 22000 // the slow step of the examples
		}
		roles := map[string]float64{
			"kernel": k, "memcpy": 1650.5, "memset": 40.25, "runtime": 3100, "dataloader": dl,
			"cpu_op": 6200.75, "other": 420,
		}
		var dur float64
		for _, us := range roles {
			dur += us
		}
		f.Steps = append(f.Steps, facts.StepBreakdown{Name: fmt.Sprintf("ProfilerStep#%d", 100+i), OffsetUS: off, DurUS: dur, RolesUS: roles})
		off += dur
	}
	causes := []string{"dataloader", "launch", "sync", "optimizer", "cpu_op", "untraced"}
	var t float64
	for i := 0; t < f.WindowUS; i++ {
		busy := 2600 + float64(i%5)*700
		idle := 900 + float64(i%7)*450
		if i%8 == 0 {
			idle = 9400 // the DataLoader wait at each step start
		}
		f.Timeline = append(f.Timeline, facts.TimelineSpan{OffsetUS: t, DurUS: min(busy, f.WindowUS-t), Kind: "busy"})
		t += busy
		if t >= f.WindowUS {
			break
		}
		kind := causes[i%len(causes)]
		if i%8 == 0 {
			kind = "dataloader"
		}
		f.Timeline = append(f.Timeline, facts.TimelineSpan{OffsetUS: t, DurUS: min(idle, f.WindowUS-t), Kind: kind})
		t += idle
	}
	f.TopKernels = []facts.KernelStat{
		{Name: "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", Count: 2400, TotalUS: 161250.5, MeanUS: 67.19, MaxUS: 212.4},
		{Name: "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, __half const*, __half*)", Count: 1800, TotalUS: 64120.25, MeanUS: 35.62, MaxUS: 80},
		{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", Count: 5400, TotalUS: 17280, MeanUS: 3.2, MaxUS: 9.1},
		{Name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", Count: 20, TotalUS: 15400.75, MeanUS: 770.04, MaxUS: 1210.5},
		{Name: "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)", Count: 600, TotalUS: 4010, MeanUS: 6.68, MaxUS: 12},
	}
	f.TopOps = []facts.OpStat{
		{Name: "aten::copy_", Calls: 140, CallsPerStep: 7, SelfCPUUS: 12040.5, TotalCPUUS: 30210, SelfDeviceUS: 30120, TotalDeviceUS: 30120},
		{Name: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", Calls: 20, CallsPerStep: 1, SelfCPUUS: 150320, TotalCPUUS: 195240.25, SelfDeviceUS: 0, TotalDeviceUS: 0},
		{Name: "aten::convolution_backward", Calls: 1060, CallsPerStep: 53, SelfCPUUS: 21300, TotalCPUUS: 60110, SelfDeviceUS: 98000.5, TotalDeviceUS: 98000.5},
		{Name: "aten::addmm", Calls: 60, CallsPerStep: 3, SelfCPUUS: 2400, TotalCPUUS: 3900, SelfDeviceUS: 8800, TotalDeviceUS: 8800},
		{Name: "Optimizer.step#SGD.step", Calls: 20, CallsPerStep: 1, SelfCPUUS: 8100, TotalCPUUS: 41000, SelfDeviceUS: 0, TotalDeviceUS: 12400},
		{Name: "aten::item", Calls: 40, CallsPerStep: 2, SelfCPUUS: 300, TotalCPUUS: 18400, SelfDeviceUS: 0, TotalDeviceUS: 0},
	}
}

// sampleTrace analyses one of the project's sample traces (written by
// engine/trace/tracetest into testdata/traces) with the built-in rules, so
// the goldens pin what the whole pipeline reports for it. The input path is
// shown relative to the repository root.
func sampleTrace(name string) func() *engine.Result {
	return func() *engine.Result {
		path := filepath.Join("..", "testdata", "traces", name+".pt.trace.json")
		r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{path}})
		if err != nil {
			panic(fmt.Sprintf("analyze %s: %v", path, err))
		}
		for _, tr := range r.Traces {
			tr.Input.Path = filepath.ToSlash(filepath.Join("testdata", "traces", name+".pt.trace.json"))
		}
		return r
	}
}

func f64p(v float64) *float64 { return &v }

// builtTrace analyses a trace that engine/trace/tracetest builds (not
// one of the sample files) with the built-in rules, read from stdin and
// shown as tracetest/NAME.json.
func builtTrace(name string, build func() *tracetest.Builder) func() *engine.Result {
	return func() *engine.Result {
		r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{"-"}, Stdin: bytes.NewReader(build().JSON())})
		if err != nil {
			panic(fmt.Sprintf("analyze %s: %v", name, err))
		}
		for _, tr := range r.Traces {
			tr.Input.Path = "tracetest/" + name + ".json"
		}
		return r
	}
}
