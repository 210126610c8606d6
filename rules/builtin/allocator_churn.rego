# METADATA
# title: GPU idle while the host is in allocator calls
# description: |
#   **Why it matters.** PyTorch's caching allocator keeps freed device memory
#   for reuse, so in the steady state `cudaMalloc` / `cudaFree` (`hipMalloc`
#   / `hipFree` on ROCm) should be rare. Here the thread that launches the
#   GPU's next work spends the GPU's idle time inside them: memory is
#   released and reserved again every step. `cudaFree` also synchronizes the
#   device, so each call drains the queue.
#
#   **How to confirm.** The culprit named in the finding is an allocator
#   call with many calls per step; `torch.cuda.memory_stats()` shows
#   `num_alloc_retries` or a growing `num_device_free`; the memory snapshot
#   (`torch.cuda.memory._record_memory_history()`) shows the churn.
#
#   **Fix.** Keep the caching allocator on and let it reuse memory:
#
#   ```python variant=default
#   # never empty the cache inside the training loop
#   # torch.cuda.empty_cache()          # <- remove from the loop
#   # let segments grow instead of being freed and re-reserved
#   #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py
#   #   (ROCm: PYTORCH_HIP_ALLOC_CONF=expandable_segments:True)
#   # and check that caching was not turned off:
#   #   PYTORCH_NO_CUDA_MEMORY_CACHING and PYTORCH_NO_HIP_MEMORY_CACHING must not be set
#   ```
#
#   When `profile_memory=True` recorded no GPU `[memory]` event although
#   the allocator calls ran, the caching allocator is bypassed: it reports
#   every block it hands out to the profiler, while the uncached path
#   (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`, or `PYTORCH_NO_HIP_MEMORY_CACHING=1`,
#   which recent releases read as well, on either vendor: c10/cuda/CUDACachingAllocator,
#   `forceUncachedAllocator`) calls `cudaMalloc` / `cudaFree` for every tensor
#   and reports nothing:
#
#   ```python variant=no-caching
#   # the caching allocator is off: every tensor free is a cudaFree / hipFree
#   #   unset PYTORCH_NO_CUDA_MEMORY_CACHING PYTORCH_NO_HIP_MEMORY_CACHING
#   #   (recent releases read "0" as off; older ones took any value, even 0, as set)
#   # and check for a pluggable allocator replacing it:
#   #   torch.cuda.memory.change_current_allocator(...)  <- remove, or make it cache
#   import os
#   for name in ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_HIP_MEMORY_CACHING"):
#       assert os.environ.get(name, "0") == "0", name
#   ```
#
#   Near the memory limit the allocator frees cached blocks to satisfy new
#   shapes: a smaller batch, fixed shapes (pad variable-length inputs), or
#   activation checkpointing leave it room.
#
#   **Impact estimate.** `gpu_idle_allocator_ratio`, the GPU idle time the
#   launching thread spent in allocator calls, measured directly; the rest
#   of the runtime-call idle stays with the host-overhead rules.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: allocator-churn
#   severity: high
#   category: memory
#   requires: [has_gpu, gpu_idle_allocator_ratio]
#   examples: idle_allocator
#   params:
#     min_idle_ratio: 0.02
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
#     - https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf
#     - https://pytorch.org/docs/stable/torch_cuda_memory.html
package stepdoctor.rules.allocator_churn

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["allocator-churn"]

# claims: the allocator part of the runtime-call idle, read by launch-bound
# and idle-gap-launch so the same time is not claimed twice.
claims if input.gpu_idle_allocator_ratio >= params.min_idle_ratio

claim := input.gpu_idle_allocator_ratio if claims
else := 0

named := concat("; ", [lib.culprit(c) | some c in input.idle_culprits.runtime; c.allocator])

calls := sprintf(" (%s allocator calls per step)", [lib.fixed(input.allocator_calls_per_step, 1)]) if input.allocator_calls_per_step != null
else := ""

# uncached: profile_memory was on, yet no GPU [memory] event was recorded
# while the allocator calls ran: the caching allocator is bypassed.
uncached if {
	input.has_memory == true
	input.memory_peak_allocated_bytes == null
}

why := sprintf(". profile_memory=True recorded no GPU memory event: the caching allocator is bypassed (%s, or a pluggable allocator), so every tensor free is a device free", [no_caching_env]) if uncached
else := ". The caching allocator is releasing and re-reserving memory"

# no_caching_env names the variable that turns caching off, the vendor's
# own first (recent releases read both names on either vendor).
no_caching_env := "PYTORCH_NO_HIP_MEMORY_CACHING=1 or PYTORCH_NO_CUDA_MEMORY_CACHING=1" if lib.rocm
else := "PYTORCH_NO_CUDA_MEMORY_CACHING=1 or PYTORCH_NO_HIP_MEMORY_CACHING=1"

fix := "no-caching" if uncached
else := "default"

finding contains f if {
	claims
	f := {
		"msg": sprintf("The GPU is idle %s %s while the launching thread is in allocator calls%s: %s%s", [
			lib.pct(claim), lib.of_time, calls, named, why,
		]),
		"impact": claim,
		"fix": fix,
		"severity": lib.severity(claim, "high"),
		"evidence": [
			{"name": "gpu_idle_allocator_ratio", "value": claim, "unit": "ratio"},
			{"name": "gpu_idle_runtime_ratio", "value": input.gpu_idle_runtime_ratio, "unit": "ratio"},
			{"name": "allocator_calls_per_step", "value": input.allocator_calls_per_step, "unit": "per_step"},
		],
	}
}
