# METADATA
# title: GPU idle while the host runs slow runtime calls or CPU operators
# description: |
#   **Why it matters.** The GPU sits idle while the thread that launches its
#   work is busy inside CUDA/HIP runtime calls or CPU operators, but the
#   kernels do not show the tiny-kernel pattern of launch-bound: the host is
#   slow for another reason. Common causes, in the order to check them:
#   allocator calls (`cudaMalloc` / `cudaFree`, `hipFree`: the caching
#   allocator is freeing and re-reserving memory, from
#   `torch.cuda.empty_cache()` or fragmentation near capacity), start-up
#   inside the window (CUDA context creation, module loading, cuDNN
#   autotuning), synchronous copies the runtime blocks on
#   (`cudaMemcpy`, `hipMemcpyWithStream`), and heavy CPU operators running
#   between GPU work (CPU-side preprocessing, ops on CPU tensors).
#
#   **How to confirm.** In the trace viewer, find the long runtime calls or
#   CPU ops on the launching thread above the GPU's gaps; the operator table
#   sorted by self CPU time names the heaviest. Nsight Systems' `gpu_gaps`
#   rule lists the gaps with the CPU activity during each.
#
#   **Fix.** Depends on what dominates the idle time. CPU operators (more
#   than half of it):
#
#   ```python variant=cpu-ops
#   # the launching thread is busy in CPU operators between kernels (named above)
#   # 1) list them by self CPU time
#   print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
#   # 2) view / slice / add_ costing tens of microseconds each is a slow host, not
#   #    the model: CPU contention (pin the process: taskset, OMP_NUM_THREADS) or
#   #    profiler overhead (record_shapes / with_stack / profile_memory off)
#   # 3) fewer ops per step: torch.compile fuses them, CUDA Graphs replay them
#   model = torch.compile(model)
#   # 4) CPU-side work (preprocessing, ops on CPU tensors): move it into
#   #    DataLoader workers or onto the GPU
#   ```
#
#   Runtime calls (more than half):
#
#   ```python variant=runtime
#   # the launching thread waits in runtime calls (named above)
#   # synchronous copies: pinned memory and non_blocking copies
#   x = x.pin_memory().to(device, non_blocking=True)
#   # allocator calls: never empty the cache in the loop; let segments grow
#   #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py
#   # start-up in the window: profile steady-state steps only
#   schedule = torch.profiler.schedule(wait=1, warmup=1, active=3)
#   ```
#
#   Python between operators (more than half):
#
#   ```python variant=python
#   # the interpreter runs between ops while the GPU waits
#   model = torch.compile(model)  # runs the traced graph, not the Python, each step
#   # or capture the step in a CUDA Graph (torch.cuda.graph) and replay it
#   ```
#
#   Otherwise, by the call that dominates:
#
#   ```python variant=default
#   # allocator churn: never empty the cache in the loop; let the allocator
#   # grow segments instead of re-reserving
#   #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py
#   # start-up in the window: profile steady-state steps only
#   schedule = torch.profiler.schedule(wait=1, warmup=1, active=3)
#   # synchronous copies: pinned memory and non_blocking copies
#   x = x.pin_memory().to(device, non_blocking=True)
#   # CPU preprocessing in the loop: move it into DataLoader workers or onto
#   # the GPU
#   ```
#
#   **Impact estimate.** `gpu_idle_launch_ratio + gpu_idle_runtime_ratio +
#   gpu_idle_cpu_op_ratio + gpu_idle_python_ratio` (`lib.host_issue_idle`),
#   the GPU idle time while the launching thread was in the launch call,
#   runtime calls, CPU operators or Python frames, minus what
#   allocator-churn and repeated-small-op claim. Confirmed: measured
#   directly.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
#
#   **Relation to launch-bound.** The same idle share is reported by exactly
#   one of the two: launch-bound when the kernels show its tiny-kernel
#   pattern, this rule otherwise. Both need `min_kernels` (50) kernels in
#   the window; a trace with a handful of kernels is a one-off, not a
#   pattern.
# custom:
#   id: idle-gap-launch
#   severity: high
#   category: host-overhead
#   requires: [has_gpu, kernel_count, gpu_idle_launch_ratio, gpu_idle_cpu_op_ratio]
#   examples: idle_host
#   params:
#     min_kernels: 50
#     min_idle_ratio: 0.05
#   references:
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
#     - https://pytorch.org/docs/stable/notes/cuda.html
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
package stepdoctor.rules.idle_gap_launch

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.allocator_churn
import data.stepdoctor.rules.launch_bound
import data.stepdoctor.rules.repeated_small_op

params := data.stepdoctor.params["idle-gap-launch"]

host_idle := lib.host_issue_idle - allocator_churn.claim

impact := max([0, host_idle - repeated_small_op.claim])

culprit_note := concat("", ["; the GPU waits most on ", lib.host_issue_culprits(3), lib.ddp_broadcast_note]) if {
	lib.host_issue_culprits(3) != ""
} else := ""


graph_note := "; most kernels are CUDA/HIP Graph replays, so per-kernel launch cost is not the cause" if {
	lib.graph_replayed
} else := ""

window_note := "; the trace has no ProfilerStep spans, so the window may include start-up (context creation, allocation, module loading)" if {
	not input.has_steps
} else := ""

# fix shows the block for the cause that holds more than half the idle
# time the finding claims.
runtime_idle := (lib.num(input.gpu_idle_launch_ratio) + lib.num(input.gpu_idle_runtime_ratio)) - allocator_churn.claim

fix := "cpu-ops" if lib.cpu_op_issue_idle > host_idle / 2
else := "runtime" if runtime_idle > host_idle / 2
else := "python" if lib.num(input.gpu_idle_python_ratio) > host_idle / 2
else := "default"

finding contains f if {
	not launch_bound.claims
	input.kernel_count >= params.min_kernels
	host_idle >= params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s while the thread that launches its next work is in launch or runtime calls (%s), CPU operators (%s) or Python (%s)%s%s%s%s", [
			lib.pct(host_idle), lib.of_time,
			lib.pct(runtime_idle), lib.pct(lib.cpu_op_issue_idle), lib.pct(lib.num(input.gpu_idle_python_ratio)),
			culprit_note, graph_note, window_note, lib.slow_host_note,
		]),
		"impact": impact,
		"fix": fix,
		"severity": lib.severity(impact, "high"),
		"evidence": [
			{"name": "gpu_idle_launch_ratio", "value": input.gpu_idle_launch_ratio, "unit": "ratio"},
			{"name": "gpu_idle_cpu_op_ratio", "value": input.gpu_idle_cpu_op_ratio, "unit": "ratio"},
			{"name": "kernel_count", "value": input.kernel_count, "unit": "count"},
		],
	}
}
