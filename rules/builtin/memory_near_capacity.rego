# METADATA
# title: Peak memory close to the GPU's capacity
# description: |
#   **Why it matters.** When allocated memory peaks within 10% of the GPU's
#   total (`min_peak_ratio` 0.9), the caching allocator has little room: a
#   longer sequence or a larger batch runs out of memory, and before that
#   the allocator starts freeing cached blocks and retrying `cudaMalloc`
#   (`num_alloc_retries` in `torch.cuda.memory_stats()`), which stalls the
#   step. Fragmentation makes the usable share smaller still.
#
#   **How to confirm.** `torch.cuda.max_memory_allocated()` and
#   `torch.cuda.memory_stats()["num_alloc_retries"]` after a few steps; the
#   profiler's memory view (`profile_memory=True`) shows the peak and which
#   op allocates it; `torch.cuda.memory._record_memory_history()` gives a
#   full snapshot.
#
#   **Fix.** Lower the activation memory:
#
#   ```python
#   # recompute activations in backward instead of storing them
#   from torch.utils.checkpoint import checkpoint
#   h = checkpoint(block, h, use_reentrant=False)
#   # half-precision activations
#   with torch.autocast("cuda", dtype=torch.bfloat16):
#       loss = model(x).loss
#   # smaller micro-batches, same effective batch
#   for micro in x.chunk(accum_steps):
#       (model(micro).loss / accum_steps).backward()
#   # less fragmentation
#   #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
#   ```
#
#   **Impact estimate.** 0: this is a risk (out of memory, allocator
#   retries), not measured step time. The severity is the rule's (medium)
#   regardless.
# custom:
#   id: memory-near-capacity
#   severity: medium
#   category: memory
#   requires: [has_memory, memory_peak_allocated_bytes, memory_peak_ratio]
#   params:
#     min_peak_ratio: 0.9
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html
#     - https://pytorch.org/docs/stable/checkpoint.html
#     - https://pytorch.org/docs/stable/torch_cuda_memory.html
package stepdoctor.rules.memory_near_capacity

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["memory-near-capacity"]

finding contains f if {
	ratio := input.memory_peak_ratio
	ratio >= params.min_peak_ratio
	peak := input.memory_peak_allocated_bytes
	f := {
		"msg": sprintf("Allocated GPU memory peaks at %s, %s of the device's memory: close to out-of-memory and allocator retries", [lib.gib(peak), lib.pct(ratio)]),
		"impact": 0,
		"evidence": [
			{"name": "memory_peak_allocated_bytes", "value": peak, "unit": "bytes"},
			{"name": "memory_peak_ratio", "value": ratio, "unit": "ratio"},
		],
	}
}
