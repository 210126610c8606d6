# METADATA
# title: Reserved memory near capacity, much of it cached but unallocated
# description: |
#   **Why it matters.** PyTorch's caching allocator keeps the segments it
#   got from `cudaMalloc` reserved after their tensors are freed, and cuts
#   new allocations out of them. When tensors of changing sizes come and go
#   (variable sequence lengths, a growing KV cache, activations of
#   different shapes), the free pieces get too small for the next request:
#   reserved memory (`torch.cuda.memory_reserved()`) stays well above
#   allocated memory (`torch.cuda.memory_allocated()`). Here, at the moment
#   allocated memory peaks, at least 30% of the reserved memory
#   (`min_fragmentation_ratio`) is cached but not allocated, and reserved
#   memory holds at least 80% of the device (`min_reserved_ratio`): the next
#   larger request makes the allocator free its cache and retry `cudaMalloc`
#   (`num_alloc_retries`), then fail with out-of-memory although enough
#   memory is free in total ("reserved but unallocated" in the error).
#   Fragmentation share = (reserved - allocated) / reserved, from the
#   `[memory]` events' Total Reserved and Total Allocated.
#
#   **How to confirm.** `torch.cuda.memory_stats()`: `reserved_bytes.all.peak`
#   well above `allocated_bytes.all.peak`, and `num_alloc_retries` above 0;
#   `torch.cuda.memory_summary()` shows the "Non-releasable memory"; a memory
#   snapshot (`torch.cuda.memory._record_memory_history()`) shows the
#   segments and the free blocks inside them.
#
#   **Fix.** Let the allocator grow segments in place instead of cutting new
#   ones:
#
#   ```python
#   # in the environment, before the first CUDA call
#   #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py
#   #   (ROCm: PYTORCH_HIP_ALLOC_CONF=expandable_segments:True)
#   import os
#   os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
#   import torch
#   # where shapes vary, pad them to a few fixed sizes (buckets) so freed
#   # blocks fit the next request
#   ```
#
#   Without expandable segments, `max_split_size_mb` (for example
#   `PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512`) stops the allocator
#   from splitting large blocks for small requests.
#
#   **Impact estimate.** 0: this is a risk (allocator retries, out of
#   memory), not measured step time; allocator calls that already cost GPU
#   time are the `allocator-churn` rule's. The severity is the rule's
#   (medium) regardless.
# custom:
#   id: memory-fragmentation
#   severity: medium
#   category: memory
#   requires: [has_memory, memory_fragmentation_ratio, memory_reserved_at_peak_ratio, memory_reserved_at_peak_bytes, memory_peak_allocated_bytes]
#   params:
#     min_fragmentation_ratio: 0.3
#     min_reserved_ratio: 0.8
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
#     - https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf
#     - https://pytorch.org/docs/stable/torch_cuda_memory.html
package stepdoctor.rules.memory_fragmentation

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["memory-fragmentation"]

at := sprintf(" (in %s)", [input.memory_peak_op]) if input.memory_peak_op != null
else := ""

finding contains f if {
	frag := input.memory_fragmentation_ratio
	frag >= params.min_fragmentation_ratio
	reserved := input.memory_reserved_at_peak_ratio
	reserved >= params.min_reserved_ratio
	f := {
		"msg": sprintf("At the allocated peak%s, the caching allocator holds %s reserved (%s of the device) for %s allocated: %s of the reserved memory is cached but unallocated, so a larger request can fail with out-of-memory", [
			at, lib.gib(input.memory_reserved_at_peak_bytes), lib.pct(reserved),
			lib.gib(input.memory_peak_allocated_bytes), lib.pct(frag),
		]),
		"impact": 0,
		"evidence": [
			{"name": "memory_fragmentation_ratio", "value": frag, "unit": "ratio"},
			{"name": "memory_reserved_at_peak_ratio", "value": reserved, "unit": "ratio"},
			{"name": "memory_reserved_at_peak_bytes", "value": input.memory_reserved_at_peak_bytes, "unit": "bytes"},
			{"name": "memory_peak_allocated_bytes", "value": input.memory_peak_allocated_bytes, "unit": "bytes"},
		],
	}
}
