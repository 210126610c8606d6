# METADATA
# title: GPU idle while the host records no work
# description: |
#   **Why it matters.** The GPU has nothing to run while the thread that
#   launches its work is not inside any event the profiler recorded: no
#   operator, runtime call, DataLoader, sync or optimizer span. That time
#   goes to Python itself (the training loop, loss bookkeeping, logging,
#   metric code, Python-side model logic between ops) or to work the
#   profiler did not trace. The TensorBoard profiler plugin flags GPU
#   utilization under 50%; Nsight Systems' `gpu_time_util` rule flags low
#   utilization too. This rule reports only the part of the idle time no
#   other rule explains (the idle-gap causes partition it), and only when it
#   is material: at least 10% of the time (`min_untraced_ratio`), with at
#   least `min_kernels` (10) kernels in the window so the trace is more
#   than a one-off launch.
#
#   **How to confirm.** In the trace viewer, the GPU rows show gaps while
#   the main thread row is empty or shows only `ProfilerStep#N`. Profile
#   with `with_stack=True` to see `python_function` events in the gaps, or
#   use a Python profiler (py-spy) on the loop.
#
#   **Fix.** Give the GPU more work per Python-side step and take Python off
#   the critical path:
#
#   ```python variant=default
#   # Larger batches amortise the fixed per-step Python cost
#   loader = DataLoader(dataset, batch_size=2 * batch_size, ...)
#   # (scale the learning rate, or accumulate gradients to keep the
#   #  effective batch if convergence requires it)
#
#   # Compile the model: fewer Python round trips per step
#   model = torch.compile(model)
#
#   # Move logging and metric code out of the step, or run it every N steps
#   ```
#
#   On a GPU older than Volta (compute capability below 7.0) Inductor cannot
#   generate its Triton kernels; CUDA Graphs take Python off the replayed
#   part without them:
#
#   ```python variant=no-triton
#   # Larger batches amortise the fixed per-step Python cost
#   loader = DataLoader(dataset, batch_size=2 * batch_size, ...)
#
#   # Replay the model from CUDA Graphs (no Triton needed): fewer Python round trips
#   model = torch.compile(model, backend="cudagraphs")
#   # or: model = torch.cuda.make_graphed_callables(model, (sample_x,))
#
#   # Move logging and metric code out of the step, or run it every N steps
#   ```
#
#   Already compiled (`compiled_kernel_ratio` at least half) or replayed
#   from CUDA/HIP Graphs (`graph_launched_kernel_ratio` at least half): the
#   GPU work is captured, so the gaps are the host's own work between
#   compiled calls or graph replays (input preparation, sampling,
#   scheduling); overlap it with the GPU instead of compiling again:
#
#   ```python variant=compiled
#   # find the Python between replays: profile with with_stack=True, or py-spy
#   # keep host-side preparation off the critical path: pinned, non_blocking copies
#   x = x.pin_memory().to(device, non_blocking=True)
#   # serving: vLLM async scheduling (--async-scheduling) overlaps scheduling with the GPU
#   ```
#
#   **Impact estimate.** `gpu_idle_untraced_ratio`, the idle time with
#   nothing recorded on the launching thread: an upper bound, since part of
#   it may be work that must stay serial. Likely: the cause is not
#   identified.
#
#   **Severity.** By impact: medium from 2%, low below; never high, since
#   the cause is not identified.
# custom:
#   id: gpu-underutilized
#   severity: medium
#   category: kernel-efficiency
#   requires: [has_gpu, kernel_count, gpu_idle_ratio, gpu_idle_untraced_ratio]
#   confidence: likely
#   params:
#     min_untraced_ratio: 0.1
#     min_kernels: 10
#   references:
#     - https://github.com/pytorch/kineto/tree/main/tb_plugin
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
package stepdoctor.rules.gpu_underutilized

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["gpu-underutilized"]

fix := "compiled" if lib.compiled
else := "compiled" if lib.graph_replayed
else := "no-triton" if lib.triton_unsupported
else := "default"

finding contains f if {
	input.kernel_count >= params.min_kernels
	untraced := input.gpu_idle_untraced_ratio
	untraced >= params.min_untraced_ratio
	idle := input.gpu_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s while the launching thread runs nothing the profiler recorded (Python between ops, untraced work); idle in total %s, busy %s", [lib.pct(untraced), lib.of_time, lib.pct(idle), lib.pct(1 - idle)]),
		"impact": untraced,
		"fix": fix,
		"severity": lib.severity(untraced, "medium"),
		"evidence": [
			{"name": "gpu_idle_untraced_ratio", "value": untraced, "unit": "ratio"},
			{"name": "gpu_idle_ratio", "value": idle, "unit": "ratio"},
		],
	}
}
