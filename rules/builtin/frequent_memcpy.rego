# METADATA
# title: Many small copies every step
# description: |
#   **Why it matters.** Every `tensor.to(device)`, `.cuda()`, `.cpu()` or
#   `copy_` between host and device is one memcpy with a fixed cost of a few
#   microseconds (the runtime call and the DMA set-up) before any byte
#   moves; a small copy from pageable memory also stalls the host. Dozens or
#   hundreds of small copies per step (per-sample `.to(device)`, moving a
#   dict of small tensors one by one, building a batch on the GPU with many
#   `torch.stack` / `copy_` calls) add up, and each one can serialise with
#   compute on the same stream.
#
#   The rule fires when a step makes at least 50 copies (`min_per_step`)
#   whose mean size is under 1 MiB (`max_mean_bytes`). Thresholds are
#   stepdoctor defaults; Nsight Systems' expert rules (`cuda_memcpy_async`,
#   `cuda_memcpy_sync`) and the PyTorch tuning guide give the same advice.
#
#   **How to confirm.** In the trace viewer, the GPU's memcpy row shows a
#   comb of thin `Memcpy HtoD` / `DtoH` events each step, each under a
#   `cudaMemcpyAsync` on the CPU thread; the report's memcpy count per step
#   is the same number.
#
#   **Fix.** Move data once, in one piece:
#
#   ```python variant=default
#   # before: one copy per tensor
#   batch = {k: v.to(device) for k, v in batch.items()}      # n copies
#   # after: pack once on the host (pinned), copy once, split on the GPU
#   flat = torch.cat([v.flatten() for v in batch.values()]).pin_memory()
#   flat = flat.to(device, non_blocking=True)
#   # build batches with one torch.cat on the host, not many torch.stack
#   # or copy_ calls on the device; keep constants on the GPU across steps
#   ```
#
#   Device-to-device copies every step under DDP are the gradient buckets
#   being copied back into `.grad`; let the gradients be views of the
#   buckets:
#
#   ```python variant=dtod
#   model = torch.nn.parallel.DistributedDataParallel(
#       model, device_ids=[rank], gradient_as_bucket_view=True)
#   ```
#
#   **Impact estimate.** `memcpy_per_step x fixed_cost_us / mean step time`
#   (5 us per copy, a stepdoctor estimate of a small `cudaMemcpyAsync`'s
#   fixed cost), never more than the copy time left after pageable-memcpy's
#   claim, so the two never count the same copies. Likely: estimated, not
#   measured.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below (at
#   most medium).
# custom:
#   id: frequent-memcpy
#   severity: medium
#   category: memory-transfer
#   requires: [has_steps, memcpy_per_step, memcpy_count, memcpy_bytes, memcpy_time_ratio, step_time_us]
#   confidence: likely
#   params:
#     min_per_step: 50
#     max_mean_bytes: 1048576
#     fixed_cost_us: 5
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
package stepdoctor.rules.frequent_memcpy

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.pageable_memcpy

params := data.stepdoctor.params["frequent-memcpy"]

mean_bytes := input.memcpy_bytes / max([1, input.memcpy_count])

estimate := (input.memcpy_per_step * params.fixed_cost_us) / input.step_time_us.mean if input.step_time_us.mean > 0
else := 0

impact := max([0, min([estimate, input.memcpy_time_ratio - pageable_memcpy.claim])])

# Copies that never cross the host boundary (all device to device).
on_device if {
	lib.num(input.memcpy_htod_count) + lib.num(input.memcpy_dtoh_count) == 0
	lib.num(input.memcpy_dtod_count) > 0
}

where := "on the device (device to device)" if on_device
else := "between host and device"

ddp := "; under DDP these are usually bucket-to-gradient copies: gradient_as_bucket_view=True removes them" if on_device
else := ""

fix := "dtod" if on_device
else := "default"

finding contains f if {
	n := input.memcpy_per_step
	n >= params.min_per_step
	mean_bytes < params.max_mean_bytes
	f := {
		"msg": sprintf("%s copies per step %s, %s KiB each on average; copies take %s %s%s", [lib.fixed(n, 0), where, lib.fixed(round(mean_bytes / 102.4) / 10, 1), lib.pct(input.memcpy_time_ratio), lib.of_time, ddp]),
		"fix": fix,
		"impact": impact,
		"severity": lib.severity(impact, "medium"),
		"evidence": [
			{"name": "memcpy_per_step", "value": n, "unit": "per_step"},
			{"name": "memcpy_mean_bytes", "value": mean_bytes, "unit": "bytes"},
			{"name": "memcpy_time_ratio", "value": input.memcpy_time_ratio, "unit": "ratio"},
		],
	}
}
