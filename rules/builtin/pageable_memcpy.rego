# METADATA
# title: Host-to-device copies from pageable memory
# description: |
#   **Why it matters.** A copy from ordinary (pageable) host memory cannot be
#   done by the GPU's DMA engine directly: the driver first stages it through
#   a page-locked bounce buffer, and the copy is synchronous with respect to
#   the host even when `non_blocking=True` is passed. The host thread stalls,
#   the copy cannot overlap with compute, and it runs at a fraction of the
#   pinned-memory bandwidth. Kineto names such copies
#   `Memcpy HtoD (Pageable -> Device)`; Nsight Systems' expert rule
#   `cuda_memcpy_async` flags the same copies.
#
#   **How to confirm.** In the trace viewer, look for `Memcpy HtoD (Pageable
#   -> Device)` events on the GPU stream and the matching `cudaMemcpyAsync` on
#   the CPU thread lasting as long as the copy itself.
#
#   **Fix.** Pin the batches and copy asynchronously:
#
#   ```python
#   loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size,
#                                        num_workers=4, pin_memory=True)
#   for x, y in loader:
#       x = x.to(device, non_blocking=True)
#       y = y.to(device, non_blocking=True)
#
#   # tensors you create yourself:
#   buf = torch.empty(shape, dtype=dtype, pin_memory=True)
#   buf.copy_(cpu_tensor)
#   gpu_tensor = buf.to(device, non_blocking=True)
#   ```
#
#   **Impact estimate.** `memcpy_time_ratio x (memcpy_pageable_htod_count /
#   memcpy_count)`: the pageable host-to-device share of the copy time;
#   pinned, asynchronous copies overlap with compute and run faster. The
#   host-side stall is not counted (it shows up as idle time while the host
#   is in runtime calls), so the real gain can be larger. Device-to-host
#   copies into pageable memory are left out: `pin_memory=True` does not
#   change them. Confirmed: counts and times are measured.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: pageable-memcpy
#   severity: high
#   category: memory-transfer
#   requires: [memcpy_pageable_htod_count, memcpy_htod_count, memcpy_count, memcpy_time_ratio]
#   examples: pageable_memcpy
#   params:
#     min_pageable: 1
#   references:
#     - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
package stepdoctor.rules.pageable_memcpy

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["pageable-memcpy"]

# claim: the copy time this rule owns (0 when it does not fire), read by
# frequent-memcpy.
claim := input.memcpy_time_ratio * min([1, input.memcpy_pageable_htod_count / max([1, input.memcpy_count])]) if {
	input.memcpy_pageable_htod_count >= params.min_pageable
} else := 0

finding contains f if {
	n := input.memcpy_pageable_htod_count
	n >= params.min_pageable
	f := {
		"msg": sprintf("%d of %d host-to-device copies read pageable host memory (%d copies in all); copies take %s %s", [n, input.memcpy_htod_count, input.memcpy_count, lib.pct(input.memcpy_time_ratio), lib.of_time]),
		"impact": claim,
		"severity": lib.severity(claim, "high"),
		"evidence": [
			{"name": "memcpy_pageable_htod_count", "value": n, "unit": "count"},
			{"name": "memcpy_htod_count", "value": input.memcpy_htod_count, "unit": "count"},
			{"name": "memcpy_count", "value": input.memcpy_count, "unit": "count"},
			{"name": "memcpy_time_ratio", "value": input.memcpy_time_ratio, "unit": "ratio"},
		],
	}
}
