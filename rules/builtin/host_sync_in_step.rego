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
#   drains every step. The PyTorch performance tuning guide lists avoiding
#   unnecessary synchronization as a first fix; Nsight Systems' expert
#   rule `cuda_api_sync` flags the same calls.
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
#   ```python variant=default
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
#   For inference (no backward pass in the trace), keep the outputs on the
#   GPU and copy them to the host once per batch of iterations:
#
#   ```python variant=inference
#   # before: preds.append(model(x).argmax(-1).item())   -> syncs every iteration
#   outs = []
#   with torch.inference_mode():
#       for x in batches:
#           outs.append(model(x.to(device, non_blocking=True)).argmax(-1))  # no sync
#   preds = torch.cat(outs).cpu()          # one sync at the end
#   ```
#
#   Drop stray `torch.cuda.synchronize()` calls (needed only for timing) and
#   copy results to the host with `.to("cpu", non_blocking=True)` into
#   pinned memory when you must.
#
#   The syncs counted are those that wait on the device
#   (`device_sync_per_step`: a runtime sync call or blocking copy, or an
#   `aten::item` that holds one); `.item()` on a CPU tensor waits on nothing
#   and is named apart.
#
#   **Impact estimate.** The GPU idle time spent while the launching thread
#   was blocked in a sync (`gpu_idle_sync_ratio`), measured directly. It is
#   a lower bound: after each sync the host must refill the queue, and that
#   refill shows up as idle time while the host issues work (launch-bound,
#   idle-gap-launch), where it is counted instead.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below, so
#   syncs that cost nothing measurable are reported but stay low.
#
#   **Relation to idle-gap-sync.** This rule owns sync idle time whenever the
#   host syncs at least `min_per_step` times per step; idle-gap-sync reports
#   it only otherwise (no steps, or rare but long syncs).
# custom:
#   id: host-sync-in-step
#   severity: high
#   category: host-overhead
#   requires: [has_gpu, sync_per_step, gpu_idle_sync_ratio]
#   examples: sync
#   params:
#     min_per_step: 1
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization
#     - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
package stepdoctor.rules.host_sync_in_step

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["host-sync-in-step"]

# syncs are the host syncs per step that wait on the device when the
# trace tells them (device_sync_per_step), else all of them.
syncs := input.device_sync_per_step if input.device_sync_per_step != null
else := input.sync_per_step

# cpu_reads names the .item() reads of CPU tensors left out of syncs.
cpu_reads := sprintf(" (and %s .item() reads of CPU tensors, which wait on nothing)", [lib.fixed(input.sync_per_step - syncs, 1)]) if {
	input.sync_per_step - syncs >= 1
} else := ""

# claims: this rule owns the GPU idle time spent in host syncs.
claims if syncs >= params.min_per_step

top := sprintf("; most in %s", [lib.top_culprit("sync")]) if input.idle_culprits.sync[0]
else := ""

# While a sync blocks behind queued GPU work, the GPU idle is the queued
# wait (idle-gap-queued's); say so instead of looking harmless.
queued := sprintf("; while they block, the GPU also waits %s %s with its next work queued (see idle-gap-queued)", [lib.pct(input.gpu_idle_queued_sync_ratio), lib.of_time]) if {
	input.gpu_idle_queued_sync_ratio >= 0.02
} else := ""

fix := "inference" if lib.inference
else := "default"

finding contains f if {
	claims
	n := syncs
	idle := input.gpu_idle_sync_ratio
	f := {
		"msg": sprintf("The host synchronizes with the GPU %s times per step (.item(), .cpu(), torch.cuda.synchronize() or blocking copies)%s; the GPU sits idle %s %s while the host waits in them%s%s", [lib.fixed(n, 1), cpu_reads, lib.pct(idle), lib.of_time, top, queued]),
		"impact": idle,
		"fix": fix,
		"severity": lib.severity(idle, "high"),
		"evidence": [
			{"name": "sync_per_step", "value": input.sync_per_step, "unit": "per_step"},
			{"name": "device_sync_per_step", "value": input.device_sync_per_step, "unit": "per_step"},
			{"name": "gpu_idle_sync_ratio", "value": idle, "unit": "ratio"},
			{"name": "sync_time_ratio", "value": input.sync_time_ratio, "unit": "ratio"},
		],
	}
}
