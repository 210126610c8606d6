# METADATA
# title: Memory to spare for a larger batch
# description: |
#   **Why it matters.** The GPU is idle a large share of the time and
#   allocated memory peaks at under half of the device's capacity: the batch
#   (or micro-batch) can grow. A larger batch gives every kernel more work
#   and amortises the fixed per-step host cost (Python, launches, syncs),
#   the usual cure for the host-bound idle time that launch-bound,
#   idle-gap-launch and gpu-underutilized report. Fires when the peak is at
#   most 50% of memory (`max_peak_ratio`) and the GPU is idle at least 30%
#   (`min_idle_ratio`); stepdoctor defaults.
#
#   **How to confirm.** `torch.cuda.max_memory_allocated()` after a step;
#   try doubling the batch and compare the step time per sample.
#
#   **Fix.**
#
#   ```python variant=default
#   loader = DataLoader(dataset, batch_size=2 * batch_size, ...)
#   # keep the optimisation the same: scale the learning rate (linear
#   # scaling rule) or keep the effective batch with fewer accumulation steps
#   ```
#
#   For inference (no backward pass), serve more requests per step; there
#   is no learning rate to scale:
#
#   ```python variant=inference
#   with torch.inference_mode():
#       out = model(torch.cat(pending_requests))  # batch requests together
#   # vLLM: raise max_num_seqs / gpu_memory_utilization; SGLang: --max-running-requests
#   ```
#
#   **Impact estimate.** 0 here: the time a larger batch recovers is the
#   idle time the host-bound rules already report, so it is not counted a
#   second time. Severity info: this is the enabling condition for their
#   fix.
# custom:
#   id: memory-headroom
#   severity: info
#   category: memory
#   requires: [has_gpu, has_memory, memory_peak_ratio, memory_peak_allocated_bytes, gpu_idle_ratio]
#   params:
#     max_peak_ratio: 0.5
#     min_idle_ratio: 0.3
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://pytorch.org/docs/stable/generated/torch.cuda.max_memory_allocated.html
package stepdoctor.rules.memory_headroom

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["memory-headroom"]

fix := "inference" if lib.inference
else := "default"

finding contains f if {
	ratio := input.memory_peak_ratio
	ratio <= params.max_peak_ratio
	idle := input.gpu_idle_ratio
	idle >= params.min_idle_ratio
	f := {
		"msg": sprintf("Allocated memory peaks at %s (%s of the device) while the GPU is idle %s %s: there is room for a larger batch", [lib.gib(input.memory_peak_allocated_bytes), lib.pct(ratio), lib.pct(idle), lib.of_time]),
		"impact": 0,
		"fix": fix,
		"evidence": [
			{"name": "memory_peak_ratio", "value": ratio, "unit": "ratio"},
			{"name": "gpu_idle_ratio", "value": idle, "unit": "ratio"},
		],
	}
}
