# METADATA
# title: Allocated memory grows step after step
# description: |
#   **Why it matters.** In steady training, allocated memory at the end of
#   each step returns to the same level. A steady rise (the least-squares
#   slope of allocated bytes at each step's end) is a suspected leak: tensors
#   kept alive across steps, most often a loss or metric appended to a list
#   with its autograd graph (`losses.append(loss)` instead of
#   `loss.detach()` or `loss.item()` every N steps), caches keyed by
#   ever-new shapes, or hooks that store activations. It ends in an
#   out-of-memory error hours in. Fires at 1 MiB per step or more
#   (`min_bytes_per_step`) over at least 3 steps (`min_steps`).
#
#   **How to confirm.** Print `torch.cuda.memory_allocated()` every N steps;
#   record a snapshot with `torch.cuda.memory._record_memory_history()` and
#   look for allocations that are never freed.
#
#   **Fix.**
#
#   ```python
#   losses.append(loss.detach())        # not loss: it keeps the whole graph
#   # or accumulate on the GPU without the graph
#   running += loss.detach()
#   ```
#
#   **Impact estimate.** 0: a leak costs memory, not measured step time,
#   until it fails. The message projects the steps left before the device
#   is full when its capacity is known.
# custom:
#   id: memory-growth
#   severity: medium
#   category: memory
#   requires: [has_memory, has_steps, memory_growth_bytes_per_step]
#   params:
#     min_bytes_per_step: 1048576
#     min_steps: 3
#   references:
#     - https://pytorch.org/docs/stable/torch_cuda_memory.html
#     - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
package stepdoctor.rules.memory_growth

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["memory-growth"]

left := sprintf("; at this rate the device is full in about %d steps", [round((input.device.total_memory_bytes - input.memory_peak_allocated_bytes) / input.memory_growth_bytes_per_step)]) if {
	input.device.total_memory_bytes > input.memory_peak_allocated_bytes
} else := ""

finding contains f if {
	input.steps_count >= params.min_steps
	g := input.memory_growth_bytes_per_step
	g >= params.min_bytes_per_step
	f := {
		"msg": sprintf("Allocated memory grows by %s MiB per step over %d steps: a suspected leak (tensors kept across steps with their graph)%s", [lib.fixed(round(g / 104857.6) / 10, 1), input.steps_count, left]),
		"impact": 0,
		"evidence": [{"name": "memory_growth_bytes_per_step", "value": g, "unit": "bytes_per_step"}],
	}
}
