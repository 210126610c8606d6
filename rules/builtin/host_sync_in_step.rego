# METADATA
# title: Host waits for the GPU every step
# description: |
#   **Why it matters.** PyTorch launches GPU work asynchronously: the Python
#   thread runs ahead and queues kernels while the GPU executes earlier ones.
#   A host sync (`tensor.item()`, `.cpu()`, `.tolist()`, `print(loss)`,
#   `torch.cuda.synchronize()`, a synchronous `cudaMemcpy`, or a
#   data-dependent op such as `torch.nonzero` or boolean masking) blocks the
#   host until the queue drains. Then the GPU idles while the host launches
#   the next kernels. One or more syncs in every step means the pipeline
#   drains every step.
#
#   **How to confirm.** In the trace viewer, look for
#   `cudaStreamSynchronize` / `cudaDeviceSynchronize` (often under
#   `aten::item` or `aten::_local_scalar_dense`) inside each `ProfilerStep#N`,
#   followed by a gap in the GPU stream. With `with_stack=True` the call
#   stack names the Python line. `torch.cuda.set_sync_debug_mode("warn")`
#   makes PyTorch warn at every synchronizing call.
#
#   **Fix.** Keep values on the GPU and read them rarely:
#
#   ```python
#   # before: loss_sum += loss.item()   -> syncs every step
#   running = torch.zeros((), device=device)
#   for step, (x, y) in enumerate(loader):
#       loss = model(x.to(device, non_blocking=True)).loss
#       loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
#       running += loss.detach()           # no sync
#       if step % log_every == 0:
#           print(running.item() / log_every)  # one sync per log_every steps
#           running.zero_()
#   ```
#
#   Drop stray `torch.cuda.synchronize()` calls (needed only for timing) and
#   copy results to the host with `.to("cpu", non_blocking=True)` into
#   pinned memory when you must.
#
#   **Impact estimate.** The trace gives the sync count and the host time
#   blocked in syncs (`sync_time_ratio`), not the GPU stall each one causes
#   (the host must refill the launch queue after every sync), so the estimate
#   is 2% of step time per sync per step (`impact_per_sync`), capped at 25%,
#   never above `gpu_idle_ratio` (a sync only costs time where the GPU would
#   otherwise be busy) and never above `sync_time_ratio`. It is an
#   inference, so confidence is "likely".
# custom:
#   id: host-sync-in-step
#   severity: medium
#   category: host-overhead
#   requires: [has_gpu, sync_per_step, gpu_idle_ratio]
#   examples: sync
#   confidence: likely
#   params:
#     min_per_step: 1
#     impact_per_sync: 0.02
#     max_impact: 0.25
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization
#     - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html
package stepdoctor.rules.host_sync_in_step

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["host-sync-in-step"]

# Host time blocked in syncs bounds what removing them can win.
blocked := input.sync_time_ratio if input.sync_time_ratio != null
else := 1

finding contains f if {
	n := input.sync_per_step
	n >= params.min_per_step
	impact := min([n * params.impact_per_sync, params.max_impact, input.gpu_idle_ratio, blocked])
	f := {
		"msg": sprintf("The host synchronizes with the GPU %s times per step (.item(), .cpu(), torch.cuda.synchronize() or synchronous copies); the GPU is idle %s of step time", [lib.fixed(n, 1), lib.pct(input.gpu_idle_ratio)]),
		"impact": impact,
		"evidence": [
			{"name": "sync_per_step", "value": n, "unit": "per_step"},
			{"name": "gpu_idle_ratio", "value": input.gpu_idle_ratio, "unit": "ratio"},
			{"name": "sync_time_ratio", "value": blocked, "unit": "ratio"},
		],
	}
}
