# METADATA
# title: GPU is idle most of the step
# description: |
#   **Why it matters.** The GPU executes kernels, copies or memsets during
#   less than half of the analysis window, so at least half of the expensive
#   device's time is wasted. The 50% threshold is the one the PyTorch
#   TensorBoard profiler plugin (torch-tb-profiler) uses for its "low
#   utilization" recommendation. This rule is the catch-all: it stays quiet
#   when a more specific rule (dataloader-bound, launch-bound,
#   host-sync-in-step) already explains the idle time.
#
#   **How to confirm.** In the trace viewer, the GPU stream rows show long
#   gaps inside each `ProfilerStep#N`. Check what the CPU threads do during
#   the gaps: Python work (loss bookkeeping, logging, metric computation),
#   optimizer steps on the CPU, checkpointing, or waiting on other ranks.
#   HTA's idle-time breakdown classifies the gaps (host wait, kernel wait).
#
#   **Fix.** Give the GPU more work per step and move host work off the
#   critical path:
#
#   ```python
#   # Larger batches amortise the fixed per-step host cost
#   loader = DataLoader(dataset, batch_size=2 * batch_size, ...)
#   # (scale the learning rate, or accumulate gradients to keep the
#   #  effective batch if convergence requires it)
#
#   # Mixed precision makes the GPU part shorter but the host part does
#   # not change, so fix host bottlenecks first
#   with torch.autocast("cuda", dtype=torch.bfloat16):
#       loss = model(x).loss
#   ```
#
#   **Impact estimate.** Half of `gpu_idle_ratio`: a larger batch or moving
#   host work off the step usually recovers part of the idle time, but some
#   of it is serial CPU work the trace cannot attribute. Likely: the cause
#   is not identified.
# custom:
#   id: gpu-underutilized
#   severity: medium
#   category: kernel-efficiency
#   requires: [gpu_idle_ratio]
#   confidence: likely
#   suppressed_by: [dataloader-bound, launch-bound, host-sync-in-step]
#   params:
#     min_idle_ratio: 0.5
#     recoverable_share: 0.5
#   references:
#     - https://github.com/pytorch/kineto/tree/main/tb_plugin
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
package stepdoctor.rules.gpu_underutilized

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["gpu-underutilized"]

finding contains f if {
	idle := input.gpu_idle_ratio
	idle > params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s of step time (busy %s)", [lib.pct(idle), lib.pct(1 - idle)]),
		"impact": idle * params.recoverable_share,
		"evidence": [{"name": "gpu_idle_ratio", "value": idle, "unit": "ratio"}],
	}
}
