package facts

import (
	"fmt"
	"io"
	"strings"
)

// Def documents one fact: the catalogue is the single source for fact
// names, units, definitions, the source of each definition and the
// profiler options a fact needs. `stepdoctor facts --list` and
// docs/FACTS.md are generated from it; a test keeps it equal to the Facts
// fields that rules see.
type Def struct {
	Name       string // json/expr/Rego name
	Unit       string // us, bytes, bytes_per_step, ratio (0..1), count, per_step, per_ms, bool, id, object, stats_us (mean/p50/p90/max in us)
	Definition string
	Source     string // where the definition comes from
	Needs      string // what the trace must have, else the fact is null
}

// Sources cited by the catalogue.
const (
	srcDesign = "DESIGN.md"
	srcTB     = "TensorBoard profiler plugin (torch-tb-profiler)"
	srcHTA    = "Holistic Trace Analysis (HTA)"
	srcNsys   = "Nsight Systems expert rules"
	srcTorch  = "PyTorch docs"
	srcHere   = "stepdoctor (this catalogue)"
)

// Catalogue lists every fact rules can read, in report order.
var Catalogue = []Def{
	{"schema_version", "count", "version of the facts shape", srcHere, ""},
	{"has_gpu", "bool", "the trace has kernel, memcpy or memset events", srcDesign, ""},
	{"has_steps", "bool", "the trace has ProfilerStep#N spans (schedule + prof.step())", srcDesign, ""},
	{"has_shapes", "bool", "the trace shows Input Dims args or record_shapes set", srcDesign, ""},
	{"has_stack", "bool", "the trace shows Call stack args or python_function events, or with_stack set", srcDesign, ""},
	{"has_memory", "bool", "the trace has [memory] events or profile_memory set", srcDesign, ""},
	{"rank", "id", "distributedInfo.rank; when several traces are analyzed together without it, the rank number in the file name (rank3, worker3)", srcDesign, "distributedInfo or a rank in the file name"},
	{"world_size", "count", "distributedInfo.world_size", srcDesign, "distributedInfo"},
	{"primary_device", "id", "the device with the largest summed kernel time (ties: smallest id); device = args.device, else pid", srcDesign, "gpu"},
	{"unsupported_accelerator", "id", "an accelerator whose device events are neither CUDA nor ROCm activity (MTIA: mtia_* categories), so GPU facts do not describe it; empty when the trace shows none", srcHere, ""},
	{"device", "object", "deviceProperties entry of the primary device: id, name, compute_major, compute_minor, sm_count, total_memory_bytes", srcDesign, "gpu"},
	{"steps_count", "count", "number of ProfilerStep#N spans (any CPU category, never the gpu_user_annotation copy)", srcDesign, ""},
	{"window_us", "us", "|W|: the union of step spans (each extended to the end of the GPU work it launched, never past the next step's start); without steps, first start to last end of complete events", srcDesign, ""},
	{"step_time_us", "stats_us", "per-step duration: mean, p50, p90 (linear interpolation, numpy's default), max; the last step's GPU tail capped at the largest tail of the other steps (rev 3)", srcDesign, "steps"},
	{"step_time_cv", "ratio", "population standard deviation / mean of step durations, last step capped (0 for one step)", srcDesign, "steps"},
	{"last_step_drain_us", "us", "GPU queue drain cut from the last step's duration for the step statistics: its GPU tail (end past its CPU end) beyond the largest tail of the other steps; 0 with one step; W keeps the drain", srcDesign, "steps"},
	{"gpu_busy_ratio", "ratio", "|union of primary-device kernel, memcpy and memset intervals clipped to W| / |W|", srcDesign, "gpu"},
	{"gpu_idle_ratio", "ratio", "1 - gpu_busy_ratio", srcDesign, "gpu"},
	{"kernel_count", "count", "primary-device kernels starting in W", srcDesign, "gpu"},
	{"kernels_per_step", "per_step", "kernel_count / steps_count", srcDesign, "gpu, steps"},
	{"kernel_launches_per_ms", "per_ms", "kernel_count per millisecond of W (launch density)", srcDesign, "gpu"},
	{"short_kernel_ratio", "ratio", "kernels under 10 us / kernel_count", srcTB, "gpu"},
	{"launch_bound_kernel_ratio", "ratio", "counted kernels whose launch call (cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ...; linked by correlation id) lasted at least as long as the kernel / kernels with such a launch", srcDesign, "gpu, launch links"},
	{"graph_launched_kernel_ratio", "ratio", "counted kernels whose launch is a CUDA/HIP Graph replay (cudaGraphLaunch, hipGraphLaunch) / kernels linked to any runtime call", srcHere, "gpu, launch links"},
	{"memcpy_count", "count", "primary-device memcpy events starting in W", srcDesign, "gpu"},
	{"memcpy_per_step", "per_step", "memcpy_count / steps_count", srcDesign, "gpu, steps"},
	{"memcpy_htod_count", "count", "memcpy whose name contains HtoD", srcDesign, "gpu"},
	{"memcpy_dtoh_count", "count", "memcpy whose name contains DtoH", srcDesign, "gpu"},
	{"memcpy_dtod_count", "count", "memcpy whose name contains DtoD", srcDesign, "gpu"},
	{"memcpy_pageable_count", "count", "memcpy whose name contains Pageable (a pageable host buffer)", srcDesign, "gpu"},
	{"memcpy_pageable_htod_count", "count", "host-to-device memcpy from pageable memory (what pin_memory=True fixes)", srcHere, "gpu"},
	{"memcpy_bytes", "bytes", "sum of args.bytes over counted memcpy (missing = 0)", srcDesign, "gpu"},
	{"memcpy_time_ratio", "ratio", "|union of memcpy intervals clipped to W| / |W|", srcDesign, "gpu"},
	{"sync_per_step", "per_step", "outermost host sync events starting in W per step (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, hip twins, aten::item, aten::_local_scalar_dense, and blocking copies: cudaMemcpy, hipMemcpy, hipMemcpyWithStream, a cudaMemcpyAsync/hipMemcpyAsync whose GPU copy (same correlation) touches Pageable memory; nested ones count once)", srcDesign, "steps"},
	{"sync_time_ratio", "ratio", "|union of those outermost sync events clipped to W| / |W|: host time blocked in syncs", srcHere, ""},
	{"dataloader_time_ratio", "ratio", "|union of enumerate(DataLoader)#...__next__ spans clipped to W| / |W|", srcTB, "steps"},
	{"dataloader_single_process", "bool", "the DataLoader iterator is _SingleProcessDataLoaderIter (num_workers=0); null without DataLoader events", srcDesign, "DataLoader events"},
	{"step_kernel_ratio", "ratio", "per-step breakdown, role kernel (compute kernels) / |W|; roles in priority order kernel, memcpy, memset, communication, runtime, dataloader, cpu_op, other, each taking only time no earlier role claimed", srcTB, "steps"},
	{"step_memcpy_ratio", "ratio", "per-step breakdown, role memcpy / |W|", srcTB, "steps"},
	{"step_memset_ratio", "ratio", "per-step breakdown, role memset / |W|", srcTB, "steps"},
	{"step_communication_ratio", "ratio", "per-step breakdown, role communication (NCCL/RCCL kernels, nccl:/gloo:/c10d:: host calls) / |W|", srcTB, "steps"},
	{"step_runtime_ratio", "ratio", "per-step breakdown, role runtime (CUDA/HIP runtime and driver calls) / |W|", srcTB, "steps"},
	{"step_dataloader_ratio", "ratio", "per-step breakdown, role dataloader / |W|", srcTB, "steps"},
	{"step_cpu_op_ratio", "ratio", "per-step breakdown, role cpu_op (other host operators) / |W|", srcTB, "steps"},
	{"step_other_ratio", "ratio", "per-step breakdown, the rest of the step / |W|", srcTB, "steps"},
	{"slow_step_excess_role", "id", "the breakdown role in which the slowest step (capped duration) spent the most time beyond the median of the steps: what made it slow; null with fewer than 3 steps", srcHere, "3+ steps"},
	{"slow_step_excess_us", "us", "that excess: the slowest step's time in slow_step_excess_role minus the steps' median in it", srcHere, "3+ steps"},
	{"gpu_idle_queued_ratio", "ratio", "GPU idle in W while the work that ends the gap was already issued (its launch ended before the gap began, started before W, or is not in the trace): a GPU-side wait on a cross-stream or event dependency, a collective's peers, launch latency or work queued before the trace / |W|; the gpu_idle_* causes partition gpu_idle_ratio", srcDesign + " rev 3; " + srcHTA + " (idle time breakdown: kernel wait)", "gpu"},
	{"gpu_idle_launch_ratio", "ratio", "GPU idle in W inside the launch call (same correlation id) of the work that ends the gap / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_sync_ratio", "ratio", "GPU idle in W while the launching thread of the next work was in a host sync or blocking copy / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_dataloader_ratio", "ratio", "GPU idle in W while the launching thread of the next work was in enumerate(DataLoader)#...__next__ / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_warmup_ratio", "ratio", "GPU idle in W charged to one-off calls (context creation, lazy module loading, first allocator calls; see warmup_ratio), on the launching thread or as the launch of the next work / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_runtime_ratio", "ratio", "GPU idle in W while the launching thread of the next work was in other runtime/driver calls (cudaMalloc, cudaFree, hipFree, stream creation, launches of other work) / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_optimizer_ratio", "ratio", "GPU idle in W while the launching thread of the next work was in Optimizer.step / zero_grad / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_cpu_op_ratio", "ratio", "GPU idle in W while the launching thread of the next work was in other recorded operators (aten and others) / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_python_ratio", "ratio", "GPU idle in W while the launching thread of the next work was only in python_function frames (with_stack) / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_untraced_ratio", "ratio", "GPU idle in W with nothing recorded on the launching thread of the next work (untraced Python, work the profiler does not see) / |W|", srcDesign + " rev 3", "gpu"},
	{"idle_culprits", "object", "per idle cause, the top 5 events the GPU waited on: name, calls, idle_us, site (innermost user Python frame with with_stack), up to 3 examples", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_queued_leading_ratio", "ratio", "the part of gpu_idle_queued_ratio before the first GPU activity in W: work issued before the trace began / |W|", srcDesign + " rev 3", "gpu"},
	{"gpu_idle_queued_sync_ratio", "ratio", "the part of gpu_idle_queued_ratio during which a host thread is blocked in an outermost host sync (host and GPU both wait) / |W|", srcHere, "gpu"},
	{"gpu_idle_queued_latency_ratio", "ratio", "the part of gpu_idle_queued_ratio (leading part excluded) before work that started within 50 us of its launch call returning: launch latency, not a dependency / |W|", srcHere, "gpu"},
	{"queued_sync_culprits", "object", "the host syncs overlapping the GPU-side waits, most overlap first: name, calls, idle_us (overlap), site, scope, copy and copy_bytes for blocking copies", srcHere, "gpu"},
	{"gpu_idle_allocator_ratio", "ratio", "the part of gpu_idle_runtime_ratio charged to allocator calls (cudaMalloc, cudaFree, hipMalloc, hipFree, ...) / |W|", srcHere, "gpu"},
	{"warmup_ratio", "ratio", "|union of one-off runtime/driver calls in W| / |W|: a non-sync call lasting at least 20x the median of its name's calls in W (or its name's only call) and at least 50 ms or 5% of |W|, all such slow calls of the name in one step", srcDesign + " rev 3", "gpu"},
	{"launch_delay_us", "stats_us", "kernel start minus its launch call's end, clamped at 0 (clock skew is a warning): mean, p50, p90, max", srcHTA + " (kernel launch statistics)", "gpu, launch links"},
	{"compute_kernel_time_ratio", "ratio", "|union of non-communication kernels of the primary device clipped to W| / |W|", srcHTA, "gpu"},
	{"comm_kernel_time_ratio", "ratio", "|union of NCCL/RCCL kernels clipped to W| / |W|", srcHTA + " (comm/comp overlap)", "communication kernels"},
	{"exposed_comm_ratio", "ratio", "communication kernel time not overlapped by compute kernels / |W|", srcHTA, "communication kernels"},
	{"comm_overlap_ratio", "ratio", "communication time overlapped by compute kernels / communication time", srcHTA, "communication kernels"},
	{"host_comm_time_ratio", "ratio", "|union of host-side collective calls (gloo:*, nccl:*, c10d::*, record_param_comms) on any thread, clipped to W| / |W|", srcHere, ""},
	{"host_comm_exposed_ratio", "ratio", "the part of host_comm_time_ratio that no other CPU operator overlaps / |W|", srcHere, ""},
	{"host_comm_top", "object", "host-side collective calls by time in W: name, calls, time_us, threads (top 5)", srcHere, ""},
	{"allreduce_per_step", "per_step", "all-reduces per step: NCCL/RCCL all-reduce kernels of the primary device in W, or host all-reduce calls of one layer (gloo:, nccl:, c10d:), whichever saw most", srcHere, "steps"},
	{"allocator_calls_per_step", "per_step", "allocator runtime calls (cudaMalloc, cudaFree, hipMalloc, hipFree, ...) starting in W per step", srcHere, "steps"},
	{"memory_peak_allocated_bytes", "bytes", "peak Total Allocated of the primary device's [memory] events", srcTorch + " (profile_memory)", "profile_memory"},
	{"memory_peak_ratio", "ratio", "memory_peak_allocated_bytes / the device's totalGlobalMem", srcHere, "profile_memory, deviceProperties"},
	{"memory_allocs_per_step", "per_step", "[memory] allocations (Bytes > 0) in W per step", srcHere, "profile_memory, steps"},
	{"memory_growth_bytes_per_step", "bytes_per_step", "least-squares slope of allocated bytes at each step's end, per step (positive: growing)", srcHere, "profile_memory, 2+ steps"},
	{"fp32_matmul_time_ratio", "ratio", "share of matmul/conv kernel time (kernels under aten::mm, addmm, bmm, linear, convolution, ...) whose op ran in float32", srcHere, "record_shapes"},
	{"tensor_core_kernel_time_ratio", "ratio", "share of kernel time in tensor-core kernels: by the launching matmul op's dtype (fp16/bf16/fp8) first, by kernel name (hmma, xmma, gmma, 1688, 16816, tf32, bf16, mfma, ...) second", srcHere, "gpu"},
	{"fp32_matmul_kernel_time_ratio", "ratio", "fp32 matmul/conv kernel time in W / |W|: kernels under aten mm/bmm/addmm/baddbmm/linear/matmul/conv*/scaled-dot-product ops whose Input type is float, or, without a recorded dtype, kernels named as fp32 GEMMs (sgemm without tf32/1688/tensorop/xmma); communication kernels excluded", srcDesign + " rev 3", "gpu"},
	{"optimizer_time_ratio", "ratio", "|union of Optimizer.step#... and Optimizer.zero_grad#... spans clipped to W| / |W|", srcHere, "optimizer spans"},
	{"zero_grad_fill_per_step", "per_step", "aten::zero_ calls inside Optimizer.zero_grad per step (set_to_none=False)", srcTorch + " (Optimizer.zero_grad)", "zero_grad spans, steps"},
	{"optimizer_single_tensor", "bool", "the optimizer step runs per-parameter ops and no aten::_foreach_*/_fused_* ops", srcTorch + " (foreach/fused optimizers)", "optimizer step spans"},
	{"optimizer_ops_per_step", "per_step", "operators directly inside Optimizer.step per step", srcHere, "optimizer step spans, steps"},
	{"step_time_max_over_p50", "ratio", "slowest step / median step (may exceed 1)", srcHere, "steps"},
	{"first_step_time_ratio", "ratio", "the first step's duration / |W| (warm-up measured as work)", srcHere, "steps"},
	{"repeated_small_op_calls_per_step", "per_step", "calls per step of the top-level host operator called most often among those with a mean duration under 20 us", srcHere, "steps"},
	{"repeated_small_op_time_ratio", "ratio", "time in that operator's calls / |W|", srcHere, "steps"},
	{"gpu_activity_missing", "bool", "kernel launch calls were recorded but no GPU activity (CUDA activity not captured)", srcHere, ""},
	{"orphan_launch_ratio", "ratio", "launch calls in W whose correlation id has no GPU event / launch calls in W", srcHere, "launch calls"},
	{"trace_bytes_per_step", "bytes_per_step", "uncompressed trace bytes / steps_count", srcHere, "steps"},
	{"rank_count", "count", "ranks analyzed together (set by the engine)", srcHere, "2+ ranks"},
	{"rank_step_time_over_median", "ratio", "this rank's mean step time / the median across ranks (may exceed 1)", srcHere, "2+ ranks, steps"},
	{"rank_compute_over_median", "ratio", "this rank's compute kernel time per step / the median across ranks (may exceed 1)", srcHere, "2+ ranks, gpu"},
	{"rank_comm_over_median", "ratio", "this rank's communication kernel time per step / the median across ranks", srcHere, "2+ ranks, communication kernels"},
	{"rank_collective_lateness_us", "us", "mean over collectives of this rank's collective kernel start minus the earliest rank's (k-th collective of each rank, trace clocks)", srcHTA + " (straggler analysis)", "2+ ranks, communication kernels"},
	{"rank_last_arrival_ratio", "ratio", "share of collectives this rank starts last (the others wait for it inside NCCL)", srcHere, "2+ ranks, communication kernels"},
	{"rank_collective_wait_ratio", "ratio", "sum over collectives of (latest rank's start - this rank's start) / |W|: time this rank waits for the last arrival", srcHere, "2+ ranks, communication kernels"},
	{"ranks_collective_wait_ratio", "ratio", "median over ranks of rank_collective_wait_ratio: what fixing the straggler would win", srcHere, "2+ ranks, communication kernels"},
	{"rank_straggler", "bool", "this rank starts at least half the collectives last; without collectives, it has the slowest compute, at least 5% over the median", srcHTA + " (straggler analysis)", "2+ ranks, gpu"},
	{"ranks_compute_spread_ratio", "ratio", "(max - min) / median of compute kernel time per step across ranks", srcHere, "2+ ranks, gpu"},
	{"collective_skew_us", "stats_us", "per collective, latest minus earliest start across ranks: mean, p50, p90, max", srcHTA, "2+ ranks, communication kernels"},
	{"elementwise_chain_count", "count", "maximal runs of 3 or more consecutive short (< 20 us) elementwise kernels on one stream (CPU-only traces: top-level pointwise aten ops on one thread)", srcDesign, ""},
	{"elementwise_chain_kernels", "count", "kernels (or ops) in those chains", srcDesign, ""},
	{"elementwise_chain_time_ratio", "ratio", "summed duration of chain members / |W|", srcDesign, ""},
}

// CatalogueMarkdown writes the catalogue as the Markdown of docs/FACTS.md.
func CatalogueMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# Facts catalogue\n\nGenerated from `engine/facts/catalogue.go` by `go test ./engine/facts -update`; do not edit.\n\n")
	fmt.Fprintf(w, "Facts schema version %d. Units: `us` microseconds, `ratio` 0..1, `per_step` per ProfilerStep, `per_ms` per millisecond of the window W, `stats_us` an object {mean, p50, p90, max} in microseconds. A fact the trace cannot give is null; \"needs\" says what makes it available.\n\n", SchemaVersion)
	fmt.Fprintf(w, "| fact | unit | definition | source | needs |\n|---|---|---|---|---|\n")
	for _, d := range Catalogue {
		needs := d.Needs
		if needs == "" {
			needs = "—"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Unit, strings.ReplaceAll(d.Definition, "|", "\\|"), d.Source, needs)
	}
}
