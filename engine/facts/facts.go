// Package facts derives the measured facts that rules evaluate from a parsed
// trace. Derive is a pure function of *trace.Trace: no I/O, no clock.
//
// Facts are the contract between traces and rules. Every field carries a json
// and an expr tag with the same snake_case name; the unit is in the name:
// _us (microseconds), _bytes, _ratio (0..1), _count, _per_step, _per_ms.
// A fact the trace cannot give is nil (JSON null), never zero. Definitions
// follow docs/ARCHITECTURE.md ("Facts" and its "Fine print"); thresholds are in Config.
package facts

import "github.com/stepdoctor/stepdoctor/engine/trace"

// SchemaVersion is the version of the Facts JSON shape. It changes whenever a
// field is renamed, removed or redefined.
const SchemaVersion = 1

// StepStats summarises per-step durations in microseconds. Percentiles
// interpolate linearly between order statistics (numpy's default).
type StepStats struct {
	Mean float64 `json:"mean" expr:"mean"`
	P50  float64 `json:"p50" expr:"p50"`
	P90  float64 `json:"p90" expr:"p90"`
	Max  float64 `json:"max" expr:"max"`
}

// Device describes the primary device (the GPU with the most kernel time)
// from the trace's deviceProperties (or older computeProperties) entry.
type Device struct {
	ID               int64  `json:"id" expr:"id"`
	Name             string `json:"name" expr:"name"`
	ComputeMajor     *int64 `json:"compute_major" expr:"compute_major"`
	ComputeMinor     *int64 `json:"compute_minor" expr:"compute_minor"`
	SMCount          *int64 `json:"sm_count" expr:"sm_count"`
	TotalMemoryBytes *int64 `json:"total_memory_bytes" expr:"total_memory_bytes"`
	// ComputeFrom is set when the trace has no deviceProperties and the
	// compute capability is a lower bound read from the primary device's
	// kernel names (cuBLAS, cuDNN and CUTLASS name their kernels for the
	// architecture they target: volta_, turing_, ampere_, sm90_, ...): the
	// prefix that gave it. The device is at least that architecture, so
	// "tensor cores" (7.0 or newer) holds; an older prefix (maxwell_, which
	// cuDNN runs on Pascal too) gives nothing. Name and sizes stay empty.
	ComputeFrom string `json:"compute_from,omitempty" expr:"compute_from"`
}

// Facts is the full set of facts derived from one trace (one rank).
type Facts struct {
	SchemaVersion int `json:"schema_version" expr:"schema_version"`

	// Capability flags: what the trace can tell at all.
	HasGPU    bool `json:"has_gpu" expr:"has_gpu"`       // any kernel, memcpy or memset event
	HasSteps  bool `json:"has_steps" expr:"has_steps"`   // steps: ProfilerStep#N spans, else the --step-marker spans
	HasShapes bool `json:"has_shapes" expr:"has_shapes"` // record_shapes=True (Input Dims args)
	HasStack  bool `json:"has_stack" expr:"has_stack"`   // with_stack=True (Call stack args, python_function events)
	HasMemory bool `json:"has_memory" expr:"has_memory"` // profile_memory=True ([memory] events)
	// LegacyExport is true for the legacy autograd-profiler export that a
	// PyTorch build without Kineto writes (torch.autograd.kineto_available()
	// is False): a bare array of events with pid "CPU functions", no
	// categories and no args, so no shapes, stacks, memory or GPU activity
	// whatever the profiler options asked for.
	LegacyExport bool `json:"legacy_export" expr:"legacy_export"`

	Rank      *int64 `json:"rank" expr:"rank"`             // distributedInfo.rank
	WorldSize *int64 `json:"world_size" expr:"world_size"` // distributedInfo.world_size

	PrimaryDevice *int64 `json:"primary_device" expr:"primary_device"` // device id (args.device, else pid)
	// UnsupportedAccelerator names a device whose events are not CUDA/ROCm
	// activity ("MTIA"); "" when the trace shows none.
	UnsupportedAccelerator *string `json:"unsupported_accelerator" expr:"unsupported_accelerator"`
	Device                 *Device `json:"device" expr:"device"`
	// GPUVendor is "nvidia" or "amd", from the device name, else from the
	// runtime calls (hip* on ROCm); nil without GPU activity.
	GPUVendor *string `json:"gpu_vendor" expr:"gpu_vendor"`
	// HasBackward reports a training trace: autograd backward events
	// (autograd::engine::evaluate_function..., ...Backward0) or optimizer
	// steps. False for inference.
	HasBackward bool `json:"has_backward" expr:"has_backward"`
	// TorchCompiled reports code compiled by torch.compile: Inductor
	// triton_ kernels or compiled-region events (CompiledFunction,
	// Torch-Compiled Region, TorchDynamo Cache Lookup).
	TorchCompiled bool `json:"torch_compiled" expr:"torch_compiled"`

	// StepMarker says what marked the steps (nil: no steps, W is the whole
	// trace). StepMarkerFound is, for a trace without steps, the automatic
	// marker (AutoMarkers) that --step-marker auto would use.
	StepMarker      *StepMarker `json:"step_marker" expr:"step_marker"`
	StepMarkerFound *StepMarker `json:"step_marker_found" expr:"step_marker_found"`

	// Steps and the analysis window W.
	StepsCount int        `json:"steps_count" expr:"steps_count"`
	WindowUS   float64    `json:"window_us" expr:"window_us"`       // |W|
	StepTimeUS *StepStats `json:"step_time_us" expr:"step_time_us"` // nil without steps
	StepTimeCV *float64   `json:"step_time_cv" expr:"step_time_cv"` // population stddev / mean
	// LastStepDrainUS is the GPU queue drain cut from the last step for the
	// step statistics (us); nil without steps. W keeps it.
	LastStepDrainUS *float64 `json:"last_step_drain_us" expr:"last_step_drain_us"`
	GPUBusyRatio    *float64 `json:"gpu_busy_ratio" expr:"gpu_busy_ratio"`
	GPUIdleRatio    *float64 `json:"gpu_idle_ratio" expr:"gpu_idle_ratio"`
	// BatchSize is the samples per step: the leading dimension of the
	// first tensor input of the step's first operator after its DataLoader
	// fetch (record_shapes), the value most steps agree on. Nil without
	// steps or shapes.
	BatchSize *int64 `json:"batch_size" expr:"batch_size"`

	// Kernels of the primary device starting in W.
	KernelCount            *int64   `json:"kernel_count" expr:"kernel_count"`
	KernelsPerStep         *float64 `json:"kernels_per_step" expr:"kernels_per_step"`
	KernelLaunchesPerMS    *float64 `json:"kernel_launches_per_ms" expr:"kernel_launches_per_ms"`
	ShortKernelRatio       *float64 `json:"short_kernel_ratio" expr:"short_kernel_ratio"`
	LaunchBoundKernelRatio *float64 `json:"launch_bound_kernel_ratio" expr:"launch_bound_kernel_ratio"`
	// GraphLaunchedKernelRatio is the share of counted kernels with a
	// launch link whose launch is a CUDA/HIP Graph replay (cudaGraphLaunch,
	// hipGraphLaunch): such kernels already avoid per-kernel launch cost.
	// Null when no counted kernel links to a runtime event.
	GraphLaunchedKernelRatio *float64 `json:"graph_launched_kernel_ratio" expr:"graph_launched_kernel_ratio"`
	// GraphLaunchCount counts the CUDA/HIP Graph replays in W
	// (cudaGraphLaunch, hipGraphLaunch calls); nil without GPU activity.
	GraphLaunchCount *int64 `json:"graph_launch_count" expr:"graph_launch_count"`

	// torch.compile facts (engine/facts/compile.go). CompiledKernelRatio
	// and TritonKernelRatio are shares of the primary device's compute
	// kernel time in W (0..1); CompiledRegionRatio and CompileTimeRatio
	// shares of |W|. Nil where the trace cannot show them.
	CompiledRegionRatio *float64 `json:"compiled_region_ratio" expr:"compiled_region_ratio"`
	CompiledKernelRatio *float64 `json:"compiled_kernel_ratio" expr:"compiled_kernel_ratio"`
	TritonKernelRatio   *float64 `json:"triton_kernel_ratio" expr:"triton_kernel_ratio"`
	CompileTimeRatio    *float64 `json:"compile_time_ratio" expr:"compile_time_ratio"`
	CompiledFrameCount  *int64   `json:"compiled_frame_count" expr:"compiled_frame_count"`
	RecompileCount      *int64   `json:"recompile_count" expr:"recompile_count"`

	// Memcpy of the primary device starting in W.
	MemcpyCount         *int64   `json:"memcpy_count" expr:"memcpy_count"`
	MemcpyPerStep       *float64 `json:"memcpy_per_step" expr:"memcpy_per_step"`
	MemcpyHtoDCount     *int64   `json:"memcpy_htod_count" expr:"memcpy_htod_count"`
	MemcpyDtoHCount     *int64   `json:"memcpy_dtoh_count" expr:"memcpy_dtoh_count"`
	MemcpyDtoDCount     *int64   `json:"memcpy_dtod_count" expr:"memcpy_dtod_count"`
	MemcpyPageableCount *int64   `json:"memcpy_pageable_count" expr:"memcpy_pageable_count"`
	// MemcpyPageableHtoDCount counts host-to-device copies from pageable
	// memory, the ones pin_memory=True fixes.
	MemcpyPageableHtoDCount *int64   `json:"memcpy_pageable_htod_count" expr:"memcpy_pageable_htod_count"`
	MemcpyBytes             *int64   `json:"memcpy_bytes" expr:"memcpy_bytes"`
	MemcpyTimeRatio         *float64 `json:"memcpy_time_ratio" expr:"memcpy_time_ratio"`

	// Host.
	SyncPerStep *float64 `json:"sync_per_step" expr:"sync_per_step"`
	// DeviceSyncPerStep counts, of those, the syncs that wait on the device
	// (see the catalogue); null without GPU runtime calls.
	DeviceSyncPerStep *float64 `json:"device_sync_per_step" expr:"device_sync_per_step"`
	// SyncTimeRatio is host time inside outermost sync events (the union of
	// their intervals clipped to W) / |W|: how long the host waits.
	SyncTimeRatio           *float64 `json:"sync_time_ratio" expr:"sync_time_ratio"`
	DataloaderTimeRatio     *float64 `json:"dataloader_time_ratio" expr:"dataloader_time_ratio"`
	DataloaderSingleProcess *bool    `json:"dataloader_single_process" expr:"dataloader_single_process"`

	// Per-step breakdown averaged over the steps: time of each role / |W|,
	// roles in priority order (kernel, memcpy, memset, communication,
	// runtime, dataloader, cpu_op, other), each taking only time no earlier
	// role claimed; they sum to 1. The TensorBoard profiler plugin's step
	// time breakdown. Null without steps.
	StepKernelRatio        *float64 `json:"step_kernel_ratio" expr:"step_kernel_ratio"`
	StepMemcpyRatio        *float64 `json:"step_memcpy_ratio" expr:"step_memcpy_ratio"`
	StepMemsetRatio        *float64 `json:"step_memset_ratio" expr:"step_memset_ratio"`
	StepCommunicationRatio *float64 `json:"step_communication_ratio" expr:"step_communication_ratio"`
	StepRuntimeRatio       *float64 `json:"step_runtime_ratio" expr:"step_runtime_ratio"`
	StepDataloaderRatio    *float64 `json:"step_dataloader_ratio" expr:"step_dataloader_ratio"`
	StepCPUOpRatio         *float64 `json:"step_cpu_op_ratio" expr:"step_cpu_op_ratio"`
	StepOtherRatio         *float64 `json:"step_other_ratio" expr:"step_other_ratio"`
	// SlowStepExcessRole is the breakdown role (one of Roles) in which the
	// slowest step spent the most time beyond the median step, and
	// SlowStepExcessUS that excess in microseconds: what made it slow. Nil
	// with fewer than 3 steps.
	SlowStepExcessRole *string  `json:"slow_step_excess_role" expr:"slow_step_excess_role"`
	SlowStepExcessUS   *float64 `json:"slow_step_excess_us" expr:"slow_step_excess_us"`
	// PhaseBreakdowns is the role breakdown per inference phase (prefill,
	// decode, mixed) when the iteration spans name their phase (vLLM,
	// SGLang; see PhaseBreakdown); nil otherwise.
	PhaseBreakdowns []PhaseBreakdown `json:"phase_breakdown" expr:"phase_breakdown"`

	// Idle-gap causes (docs/ARCHITECTURE.md "Why the GPU waits"): each GPU idle
	// gap in W is charged through the launch of the activity that ends it:
	// queued when that work was already issued (a GPU-side wait), launch for
	// the launch call itself (warmup when it is a one-off), else what the
	// launching thread was doing, in priority order sync, dataloader,
	// warmup, runtime, optimizer, cpu_op, python, and untraced where nothing
	// was recorded on it. Fractions of |W| (0..1) that sum to
	// gpu_idle_ratio. Null without GPU.
	GPUIdleQueuedRatio     *float64 `json:"gpu_idle_queued_ratio" expr:"gpu_idle_queued_ratio"`
	GPUIdleLaunchRatio     *float64 `json:"gpu_idle_launch_ratio" expr:"gpu_idle_launch_ratio"`
	GPUIdleSyncRatio       *float64 `json:"gpu_idle_sync_ratio" expr:"gpu_idle_sync_ratio"`
	GPUIdleDataloaderRatio *float64 `json:"gpu_idle_dataloader_ratio" expr:"gpu_idle_dataloader_ratio"`
	GPUIdleWarmupRatio     *float64 `json:"gpu_idle_warmup_ratio" expr:"gpu_idle_warmup_ratio"`
	GPUIdleRuntimeRatio    *float64 `json:"gpu_idle_runtime_ratio" expr:"gpu_idle_runtime_ratio"`
	GPUIdleOptimizerRatio  *float64 `json:"gpu_idle_optimizer_ratio" expr:"gpu_idle_optimizer_ratio"`
	GPUIdleCPUOpRatio      *float64 `json:"gpu_idle_cpu_op_ratio" expr:"gpu_idle_cpu_op_ratio"`
	GPUIdlePythonRatio     *float64 `json:"gpu_idle_python_ratio" expr:"gpu_idle_python_ratio"`
	GPUIdleUntracedRatio   *float64 `json:"gpu_idle_untraced_ratio" expr:"gpu_idle_untraced_ratio"`
	// IdleCulprits names, per idle cause (IdleCauses), the top events the GPU
	// waited on, most idle first, and under OneOffOpCulprits those of
	// gpu_idle_cpu_op_oneoff_ratio. Null without GPU idle.
	IdleCulprits map[string][]Culprit `json:"idle_culprits" expr:"idle_culprits"`
	// GPUIdleQueuedLeadingRatio is the part of gpu_idle_queued_ratio before
	// the first GPU activity in W: launched work queued behind GPU work the
	// trace did not record (0..1 of |W|).
	// GPUIdleQueuedSyncRatio is the part of it during which a host thread
	// is blocked in an outermost host sync: host and GPU both wait.
	// QueuedSyncCulprits are those syncs, most overlap first.
	GPUIdleQueuedLeadingRatio *float64 `json:"gpu_idle_queued_leading_ratio" expr:"gpu_idle_queued_leading_ratio"`
	GPUIdleQueuedSyncRatio    *float64 `json:"gpu_idle_queued_sync_ratio" expr:"gpu_idle_queued_sync_ratio"`
	// GPUIdleLeadingRatio is the GPU's idle before its first activity in W
	// (the first gap, when W begins idle), queued or not (0..1 of |W|).
	GPUIdleLeadingRatio *float64 `json:"gpu_idle_leading_ratio" expr:"gpu_idle_leading_ratio"`
	// GPUIdleQueuedLatencyRatio is the part of gpu_idle_queued_ratio (after
	// the leading part) before work that started within 50 us of its launch
	// call returning: launch latency, not a dependency (0..1 of |W|).
	GPUIdleQueuedLatencyRatio *float64  `json:"gpu_idle_queued_latency_ratio" expr:"gpu_idle_queued_latency_ratio"`
	QueuedSyncCulprits        []Culprit `json:"queued_sync_culprits" expr:"queued_sync_culprits"`
	// GPUIdleAllocatorRatio is the part of gpu_idle_runtime_ratio charged
	// to allocator calls (cudaMalloc, cudaFree, hipFree, ...), 0..1 of |W|.
	GPUIdleAllocatorRatio *float64 `json:"gpu_idle_allocator_ratio" expr:"gpu_idle_allocator_ratio"`
	// GPUIdleCPUOpOneOffRatio is the part of gpu_idle_cpu_op_ratio inside
	// one-off operator calls (an operator's call lasting 20x the median of
	// its name's calls and 50 ms or 1% of |W|, below 5% of |W| only as the
	// first call of its name and shapes, no host sync inside: the first
	// allocation, cuDNN autotuning, a first GEMM shape), 0..1 of |W|: warm-up in the window,
	// like gpu_idle_warmup_ratio. Its culprits are IdleCulprits[OneOffOpCulprits].
	GPUIdleCPUOpOneOffRatio *float64 `json:"gpu_idle_cpu_op_oneoff_ratio" expr:"gpu_idle_cpu_op_oneoff_ratio"`
	// ViewOpMedianUS is the median duration in us of the view-only
	// operators in W (aten::view, aten::as_strided, aten::_unsafe_view,
	// aten::alias: metadata only, no kernel, no child op) on the thread
	// that launches the most kernels, the host's fixed cost of one
	// dispatched op. About 1 us on a current server CPU
	// with the profiler on; tens of us mean a slowed host (CPU contention,
	// oversubscribed threads) or heavy profiler overhead, which inflates
	// every host-side cost in the trace. Null under 50 such calls.
	ViewOpMedianUS *float64 `json:"view_op_median_us" expr:"view_op_median_us"`
	// WarmupRatio is |union of one-off runtime calls in W| / |W| (0..1):
	// context creation, lazy module loading, the allocator's first calls
	// inside the profiled window (docs/ARCHITECTURE.md "One-off calls").
	WarmupRatio *float64 `json:"warmup_ratio" expr:"warmup_ratio"`

	// Launch delay: kernel start minus its launch call's end, clamped at 0
	// (a kernel may start before the call returns), over counted kernels
	// with a launch link; microseconds.
	LaunchDelayUS *StepStats `json:"launch_delay_us" expr:"launch_delay_us"`

	// Communication (collective kernels, see isCommKernelName, on the primary device, in W).
	// comm_kernel_time_ratio = |comm| / |W|; exposed_comm_ratio = |comm not
	// overlapped by compute kernels| / |W|; comm_overlap_ratio = |comm ∩
	// compute| / |comm| (null without communication kernels). HTA's
	// comm/comp overlap.
	ComputeKernelTimeRatio *float64 `json:"compute_kernel_time_ratio" expr:"compute_kernel_time_ratio"`
	CommKernelTimeRatio    *float64 `json:"comm_kernel_time_ratio" expr:"comm_kernel_time_ratio"`
	ExposedCommRatio       *float64 `json:"exposed_comm_ratio" expr:"exposed_comm_ratio"`
	CommOverlapRatio       *float64 `json:"comm_overlap_ratio" expr:"comm_overlap_ratio"`

	// Host-side collectives (gloo:*, nccl:*, c10d::*, record_param_comms on
	// any host thread, in W). host_comm_time_ratio = |their union| / |W|;
	// host_comm_exposed_ratio = the part no other CPU operator overlaps /
	// |W| (0..1). On CPU jobs (gloo) these calls block; on GPU jobs they
	// only enqueue NCCL work. HostCommTop lists them by time.
	HostCommTimeRatio    *float64   `json:"host_comm_time_ratio" expr:"host_comm_time_ratio"`
	HostCommExposedRatio *float64   `json:"host_comm_exposed_ratio" expr:"host_comm_exposed_ratio"`
	HostCommTop          []CommStat `json:"host_comm_top" expr:"host_comm_top"`
	// AllReducePerStep counts all-reduces per step: all-reduce collective
	// kernels of the primary device in W, or host all-reduce calls of one
	// layer (gloo:, nccl:, c10d:), whichever saw most. One per parameter
	// means DDP bucketing is off or gradients are reduced by hand.
	AllReducePerStep *float64 `json:"allreduce_per_step" expr:"allreduce_per_step"`
	// CollectiveStats is the collectives table: per kind and process group,
	// count, bytes, kernel time, exposed time, algorithm and bus bandwidth
	// (NCCL tests' formulas with world_size), most time first. Nil without
	// communication kernels.
	CollectiveStats []CollectiveStat `json:"collective_stats" expr:"collective_stats"`
	// AllocatorCallsPerStep counts allocator runtime calls (cudaMalloc,
	// cudaFree, hipFree, ...) starting in W per step.
	AllocatorCallsPerStep *float64 `json:"allocator_calls_per_step" expr:"allocator_calls_per_step"`

	// Memory (profile_memory=True): from [memory] events of the primary
	// device. Peak of "Total Allocated" in bytes, that peak / the device's
	// totalGlobalMem, allocations (Bytes > 0) per step, and the least-squares
	// slope of allocated bytes at each step's end, in bytes per step
	// (positive: growing, a suspected leak).
	MemoryPeakAllocatedBytes *int64   `json:"memory_peak_allocated_bytes" expr:"memory_peak_allocated_bytes"`
	MemoryPeakRatio          *float64 `json:"memory_peak_ratio" expr:"memory_peak_ratio"`
	MemoryAllocsPerStep      *float64 `json:"memory_allocs_per_step" expr:"memory_allocs_per_step"`
	MemoryGrowthBytesPerStep *float64 `json:"memory_growth_bytes_per_step" expr:"memory_growth_bytes_per_step"`
	// At the allocated peak of the same device: Total Reserved (the
	// caching allocator's segments), that / totalGlobalMem, and the
	// fragmentation share (reserved - allocated) / reserved (0..1); null
	// without Total Reserved. MemoryPeakOp names the innermost CPU
	// operator enclosing the allocation that reached the peak.
	MemoryReservedAtPeakBytes *int64   `json:"memory_reserved_at_peak_bytes" expr:"memory_reserved_at_peak_bytes"`
	MemoryReservedAtPeakRatio *float64 `json:"memory_reserved_at_peak_ratio" expr:"memory_reserved_at_peak_ratio"`
	MemoryFragmentationRatio  *float64 `json:"memory_fragmentation_ratio" expr:"memory_fragmentation_ratio"`
	MemoryPeakOp              *string  `json:"memory_peak_op" expr:"memory_peak_op"`

	// Precision (record_shapes=True gives op dtypes). fp32_matmul_time_ratio:
	// share of matmul/conv kernel time whose op ran in fp32 (float);
	// tensor_core_kernel_time_ratio: share of all kernel time in tensor-core
	// kernels, decided by the launching op's dtype (fp16/bf16) first and by
	// kernel name second. Null without matmul/conv kernels or dtypes.
	FP32MatmulTimeRatio       *float64 `json:"fp32_matmul_time_ratio" expr:"fp32_matmul_time_ratio"`
	TensorCoreKernelTimeRatio *float64 `json:"tensor_core_kernel_time_ratio" expr:"tensor_core_kernel_time_ratio"`
	// TopKernelName is the compute kernel (not a collective) with the largest
	// summed duration in W; TopKernelShare its share of the summed compute
	// kernel duration (0..1); TopKernelTimeRatio |union of its intervals
	// clipped to W| / |W| (0..1). Nil without kernels.
	TopKernelName      *string  `json:"top_kernel_name" expr:"top_kernel_name"`
	TopKernelShare     *float64 `json:"top_kernel_share" expr:"top_kernel_share"`
	TopKernelTimeRatio *float64 `json:"top_kernel_time_ratio" expr:"top_kernel_time_ratio"`
	// FP32MatmulKernelTimeRatio is the fp32 matmul/conv kernel time in W /
	// |W| (0..1): kernels under an aten matmul/conv op whose Input type is
	// float, or, where no dtype is recorded, kernels named as fp32 GEMMs
	// (sgemm without TF32 marks). Communication kernels never count. The
	// time AMP can shrink (docs/ARCHITECTURE.md "Impact").
	FP32MatmulKernelTimeRatio *float64 `json:"fp32_matmul_kernel_time_ratio" expr:"fp32_matmul_kernel_time_ratio"`

	// Kernel efficiency against the device's roofline (record_shapes=True).
	// DevicePeak is the primary device's row of the peak table (Devices),
	// nil for a device the table does not know. Modelled ops are the
	// outermost matmul, convolution, attention, softmax, norm and
	// elementwise operators with shapes (FLOP and byte models in
	// flops.go); their kernel time is the kernels they and their
	// descendants launched in W. modelled_kernel_time_ratio: that time /
	// the primary device's kernel time in W. modelled_flops_per_s: the ops
	// with FLOPs, total FLOPs / their kernel time. kernel_peak_flops_ratio:
	// sum of FLOPs / peak of the op's dtype over their kernel time (the
	// kernel-time-weighted share of peak); kernel_roofline_ratio: sum of
	// time at the roofline (max(FLOPs / peak, bytes / bandwidth)) over the
	// kernel time of all modelled ops. RooflineKinds and RooflineOps (the
	// top 10 signatures by kernel time) break it down.
	DevicePeak              *DevicePeak    `json:"device_peak" expr:"device_peak"`
	ModelledKernelTimeRatio *float64       `json:"modelled_kernel_time_ratio" expr:"modelled_kernel_time_ratio"`
	ModelledFLOPSPerS       *float64       `json:"modelled_flops_per_s" expr:"modelled_flops_per_s"`
	KernelPeakFLOPSRatio    *float64       `json:"kernel_peak_flops_ratio" expr:"kernel_peak_flops_ratio"`
	KernelRooflineRatio     *float64       `json:"kernel_roofline_ratio" expr:"kernel_roofline_ratio"`
	RooflineKinds           []RooflineKind `json:"roofline_kinds" expr:"roofline_kinds"`
	RooflineOps             []RooflineOp   `json:"roofline_ops" expr:"roofline_ops"`

	// Optimizer, from Optimizer.step#... / Optimizer.zero_grad#... spans.
	// optimizer_time_ratio: their union in W / |W|. zero_grad_fill_per_step:
	// aten::zero_ calls inside zero_grad per step (set_to_none=False fills
	// every gradient with zeros). optimizer_single_tensor: true when the step
	// runs per-parameter ops and no _foreach_/_fused_ kernels (the
	// single-tensor implementation), false when multi-tensor, null without an
	// optimizer step. optimizer_ops_per_step: operators directly inside the
	// step per step.
	OptimizerTimeRatio    *float64 `json:"optimizer_time_ratio" expr:"optimizer_time_ratio"`
	ZeroGradFillPerStep   *float64 `json:"zero_grad_fill_per_step" expr:"zero_grad_fill_per_step"`
	OptimizerSingleTensor *bool    `json:"optimizer_single_tensor" expr:"optimizer_single_tensor"`
	OptimizerOpsPerStep   *float64 `json:"optimizer_ops_per_step" expr:"optimizer_ops_per_step"`
	OptimizerClass        *string  `json:"optimizer_class" expr:"optimizer_class"`

	// Step variance: slowest step / median step, and the first step's share
	// of |W| (warm-up measured as work). Null without steps.
	StepTimeMaxOverP50 *float64 `json:"step_time_max_over_p50" expr:"step_time_max_over_p50"`
	FirstStepTimeRatio *float64 `json:"first_step_time_ratio" expr:"first_step_time_ratio"`

	// Repeated small ops: among top-level host operators (called from
	// Python), the one called most often per step whose mean duration is
	// under 20 us: its calls per step and the time all such calls take / |W|.
	// Null without steps.
	RepeatedSmallOpCallsPerStep *float64 `json:"repeated_small_op_calls_per_step" expr:"repeated_small_op_calls_per_step"`
	RepeatedSmallOpTimeRatio    *float64 `json:"repeated_small_op_time_ratio" expr:"repeated_small_op_time_ratio"`
	// RepeatedSmallOpName names that operator (nil when none qualifies).
	RepeatedSmallOpName *string `json:"repeated_small_op_name" expr:"repeated_small_op_name"`

	// Profiling setup. gpu_activity_missing: no GPU activity although the
	// trace shows a GPU job: kernel launch calls, deviceProperties of a
	// CUDA/ROCm device or NCCL collectives (CUDA activity not captured);
	// gpu_activity_missing_reason names what showed it (nil otherwise).
	// orphan_launch_ratio: launch calls in W whose correlation id has no GPU
	// event / launch calls in W (a cut file or lost CUPTI buffers); null
	// without launch calls. trace_bytes_per_step: uncompressed trace bytes
	// per step.
	GPUActivityMissing       bool     `json:"gpu_activity_missing" expr:"gpu_activity_missing"`
	GPUActivityMissingReason *string  `json:"gpu_activity_missing_reason" expr:"gpu_activity_missing_reason"`
	OrphanLaunchRatio        *float64 `json:"orphan_launch_ratio" expr:"orphan_launch_ratio"`
	TraceBytesPerStep        *float64 `json:"trace_bytes_per_step" expr:"trace_bytes_per_step"`

	// Cross-rank facts, computed by CrossRank (crossrank.go) from all the
	// ranks' facts and applied by the engine when several ranks are analyzed
	// together (null for a single trace). Per rank: its mean step time,
	// compute kernel time and communication kernel time, each over the
	// median across ranks; its mean lateness at collectives (start of the
	// k-th collective kernel minus the earliest rank's, on the trace clocks);
	// the share of collectives it starts last; whether it is the straggler
	// (last at half the collectives or more; without collectives, the
	// slowest compute at least 5% over the median). Across ranks: spread of compute time ((max - min) / median)
	// and the collective start skew (max - min start per collective).
	RankCount                *int64     `json:"rank_count" expr:"rank_count"`
	RankStepTimeOverMedian   *float64   `json:"rank_step_time_over_median" expr:"rank_step_time_over_median"`
	RankComputeOverMedian    *float64   `json:"rank_compute_over_median" expr:"rank_compute_over_median"`
	RankCommOverMedian       *float64   `json:"rank_comm_over_median" expr:"rank_comm_over_median"`
	RankCollectiveLatenessUS *float64   `json:"rank_collective_lateness_us" expr:"rank_collective_lateness_us"`
	RankLastArrivalRatio     *float64   `json:"rank_last_arrival_ratio" expr:"rank_last_arrival_ratio"`
	RankCollectiveWaitRatio  *float64   `json:"rank_collective_wait_ratio" expr:"rank_collective_wait_ratio"`
	RanksCollectiveWaitRatio *float64   `json:"ranks_collective_wait_ratio" expr:"ranks_collective_wait_ratio"`
	RankStraggler            *bool      `json:"rank_straggler" expr:"rank_straggler"`
	RanksStraggler           *int64     `json:"ranks_straggler" expr:"ranks_straggler"`
	RanksComputeSpreadRatio  *float64   `json:"ranks_compute_spread_ratio" expr:"ranks_compute_spread_ratio"`
	CollectiveSkewUS         *StepStats `json:"collective_skew_us" expr:"collective_skew_us"`

	// Elementwise chains.
	ElementwiseChainCount     int64   `json:"elementwise_chain_count" expr:"elementwise_chain_count"`
	ElementwiseChainKernels   int64   `json:"elementwise_chain_kernels" expr:"elementwise_chain_kernels"`
	ElementwiseChainTimeRatio float64 `json:"elementwise_chain_time_ratio" expr:"elementwise_chain_time_ratio"`
	// ElementwiseChainTop names the longest chains (top 3 by time).
	ElementwiseChainTop []ChainInfo `json:"elementwise_chain_top" expr:"elementwise_chain_top"`

	// Examples holds a few example events per kind, longest first, for
	// evidence in findings. Keys: "pageable_memcpy", "sync", "dataloader",
	// "short_kernel", "step". Not part of the expr environment.
	Examples map[string][]EventRef `json:"examples,omitempty" expr:"-"`

	// Tables and series for reports; not part of the expr environment.
	Steps      []StepBreakdown `json:"steps,omitempty" expr:"-"`       // per-step role breakdown, in step order
	Timeline   []TimelineSpan  `json:"timeline,omitempty" expr:"-"`    // primary GPU busy/idle over W
	TopOps     []OpStat        `json:"top_ops,omitempty" expr:"-"`     // by self CPU time, top 25
	TopKernels []KernelStat    `json:"top_kernels,omitempty" expr:"-"` // by total time, top 25
	Labels     []LabelStat     `json:"labels,omitempty" expr:"-"`      // record_function labels, by time
	Modules    []LabelStat     `json:"modules,omitempty" expr:"-"`     // nn.Module frames (with_modules), by time
	// Memory is each device's memory curve and peak (profile_memory),
	// GPUs by id, then the CPU.
	Memory []MemoryDevice `json:"memory,omitempty" expr:"-"`
	// Collectives are the primary device's collective kernels in W in start
	// order, with absolute start times (baseTimeNanoseconds applied) for
	// cross-rank alignment.
	Collectives []Collective `json:"collectives,omitempty" expr:"-"`
	// PythonSites maps hot host events to the Python functions on their
	// stack (with_stack traces), hottest first; see PySite.
	PythonSites []PySite `json:"python_sites,omitempty" expr:"-"`

	// Diagnostics noticed while deriving (clock skew between host and
	// device); the engine adds them to the trace's health.
	Diagnostics []trace.Diagnostic `json:"-" expr:"-"`
}

// EventRef points at one trace event as an example behind a fact, so a
// report can show "what to look for" in the trace viewer.
type EventRef struct {
	Name     string  `json:"name"`
	TSUS     float64 `json:"ts_us"`     // start on the trace's own clock, microseconds
	OffsetUS float64 `json:"offset_us"` // start minus the window start, microseconds
	DurUS    float64 `json:"dur_us"`
	PID      string  `json:"pid"`
	TID      string  `json:"tid"`
	// TSNS is the start in exact nanoseconds on the trace's own clock
	// (TSUS rounds it: epoch-microsecond timestamps lose the nanoseconds in
	// a float64), so an annotated trace can point at the event itself. Not
	// written to facts files: 0 in facts read back from one.
	TSNS int64 `json:"-"`
}

// Roles of the per-step breakdown, in priority order: each role gets only
// time no earlier role claimed (docs/ARCHITECTURE.md "Facts", per-step breakdown).
var Roles = []string{"kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_op", "other"}

// StepBreakdown is one step's wall time split by role. Times are
// microseconds; the role times sum to DurUS.
type StepBreakdown struct {
	Name     string             `json:"name"`      // ProfilerStep#N
	OffsetUS float64            `json:"offset_us"` // start minus the window start
	DurUS    float64            `json:"dur_us"`
	RolesUS  map[string]float64 `json:"roles_us"` // keys from Roles
	// Phase is the inference phase the step's marker names: "prefill",
	// "decode" or "mixed"; "" when it names none (ProfilerStep#N).
	Phase string `json:"phase,omitempty"`
}

// TimelineSpan is one piece of the primary GPU's timeline over the window:
// busy, or an idle gap with the cause the host was in meanwhile (one of
// IdleCauses). Adjacent spans are merged so a timeline has at most a few
// hundred spans.
type TimelineSpan struct {
	OffsetUS float64 `json:"offset_us"`
	DurUS    float64 `json:"dur_us"`
	Kind     string  `json:"kind"` // "busy" or an idle cause
}

// OpStat is one row of the operator table (as prof.key_averages() shows):
// per operator name, calls and CPU/device time in microseconds. Device time
// is the kernels launched by the op, linked by correlation and External id.
// Totals count a call made inside another call of the same operator once,
// in the outer call (key_averages adds it again, so a recursive
// aten::copy_ could total more than the window).
type OpStat struct {
	Name          string  `json:"name"`
	Calls         int64   `json:"calls"`
	CallsPerStep  float64 `json:"calls_per_step"`
	SelfCPUUS     float64 `json:"self_cpu_us"`
	TotalCPUUS    float64 `json:"total_cpu_us"`
	SelfDeviceUS  float64 `json:"self_device_us"`
	TotalDeviceUS float64 `json:"total_device_us"`
}

// KernelStat aggregates the primary device's kernels by name.
type KernelStat struct {
	Name    string  `json:"name"`
	Count   int64   `json:"count"`
	TotalUS float64 `json:"total_us"`
	MeanUS  float64 `json:"mean_us"`
	MaxUS   float64 `json:"max_us"`
}

// LabelStat is one record_function label (user_annotation such as
// forward_pass, backward_pass, data_loading; never ProfilerStep#N) or, in
// Facts.Modules, one nn.Module (the python_function frames "nn.Module:
// Name_N" that with_modules=True records), nested modules flattened with
// their path. Times are microseconds. TotalUS is host time: the union of
// its spans starting in W, clipped to W; PerStepUS that per step, Ratio
// that / |W|. GPUUS is the summed duration of the primary device's kernels
// in W launched from inside it (their launch call, same correlation id,
// lies within one of its spans on the launching thread; each kernel counts
// once per label even when the label nests in itself), Kernels their
// number; a module's kernels include its submodules'. GPUSpanUS is the
// union of the label's gpu_user_annotation spans (Kineto's GPU-side copy
// of the range) on the primary device in W; null when there are none, and
// always for modules. Rows are sorted by the larger of GPUUS and TotalUS.
type LabelStat struct {
	Name string `json:"name"`
	// Path is a module's enclosing modules and itself, outermost first,
	// joined by "/" (Model_0/Encoder_0/Linear_0), and Depth the number
	// of enclosing modules; empty for labels.
	Path      string   `json:"path,omitempty"`
	Depth     int      `json:"depth,omitempty"`
	Calls     int64    `json:"calls"`
	TotalUS   float64  `json:"total_us"`
	PerStepUS float64  `json:"per_step_us"`
	Ratio     float64  `json:"ratio"`
	GPUUS     float64  `json:"gpu_us"`
	Kernels   int64    `json:"kernels"`
	GPUSpanUS *float64 `json:"gpu_span_us,omitempty"`
}

// Collective is one communication kernel: name, absolute start on the
// trace clock in microseconds, and duration.
type Collective struct {
	Name    string  `json:"name"`
	StartUS float64 `json:"start_us"`
	DurUS   float64 `json:"dur_us"`
}

// CauseRatio is one idle cause and its share of |W| (0..1).
type CauseRatio struct {
	Cause string  // one of IdleCauses
	Ratio float64 // fraction of |W|
}

// IdleCauseRatios lists the idle causes in IdleCauses order with their
// gpu_idle_*_ratio, skipping causes that are null; nil when the trace has no
// GPU idle breakdown. It is the
// one place that pairs a cause's name with its fact.
func (f *Facts) IdleCauseRatios() []CauseRatio {
	var out []CauseRatio
	for k, p := range f.idleCauseFields() {
		if *p != nil { // a facts file of an older schema lacks the newer causes
			out = append(out, CauseRatio{IdleCauses[k], **p})
		}
	}
	return out
}

// RoleRatios lists the breakdown roles in Roles order with their
// step_*_ratio (share of |W|), skipping roles that are null; nil without a
// breakdown. It is the one place that pairs a role with its fact.
func (f *Facts) RoleRatios() []CauseRatio {
	var out []CauseRatio
	for k, p := range f.roleFields() {
		if *p != nil {
			out = append(out, CauseRatio{Roles[k], **p})
		}
	}
	return out
}

// roleFields are the step_*_ratio fields in Roles order.
func (f *Facts) roleFields() []**float64 {
	return []**float64{&f.StepKernelRatio, &f.StepMemcpyRatio, &f.StepMemsetRatio, &f.StepCommunicationRatio,
		&f.StepRuntimeRatio, &f.StepDataloaderRatio, &f.StepCPUOpRatio, &f.StepOtherRatio}
}

// idleCauseFields are the gpu_idle_*_ratio fields in IdleCauses order.
func (f *Facts) idleCauseFields() []**float64 {
	return []**float64{&f.GPUIdleQueuedRatio, &f.GPUIdleLaunchRatio, &f.GPUIdleSyncRatio, &f.GPUIdleDataloaderRatio,
		&f.GPUIdleWarmupRatio, &f.GPUIdleRuntimeRatio, &f.GPUIdleOptimizerRatio, &f.GPUIdleCPUOpRatio,
		&f.GPUIdlePythonRatio, &f.GPUIdleUntracedRatio}
}

// ChainInfo names one elementwise chain: its length, summed duration
// (microseconds), the operators that launched its kernels (GPU) or the ops
// themselves (CPU) in order, the user's Python frame and record_function
// region of its first member's operator, and its first member.
type ChainInfo struct {
	Members int64    `json:"members"`
	TimeUS  float64  `json:"time_us"`
	Ops     []string `json:"ops"`
	Site    string   `json:"site,omitempty"`
	Scope   string   `json:"scope,omitempty"`
	Example EventRef `json:"example"`
}
