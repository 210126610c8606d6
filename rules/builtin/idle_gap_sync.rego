# METADATA
# title: GPU idle while the host waits in a sync
# description: |
#   **Why it matters.** The launching thread sat in a synchronizing call
#   (`cudaStreamSynchronize`, `cudaDeviceSynchronize`, `aten::item`, a
#   synchronous copy) while the GPU had nothing queued. host-sync-in-step
#   reports syncs that happen every step; this rule reports the same idle
#   time when that rule does not apply: the trace has no ProfilerStep spans
#   (so syncs per step are unknown), or syncs are rarer than once per step
#   but long (a periodic `.cpu()` of metrics, a checkpoint, an evaluation).
#
#   **How to confirm.** In the trace viewer, find the long synchronize
#   calls on the launching thread above the GPU's idle gaps; the example
#   events list the longest. `torch.cuda.set_sync_debug_mode("warn")` names
#   every synchronizing call.
#
#   **Fix.** Remove the sync or make it rare and cheap:
#
#   ```python
#   metrics.append(loss.detach())          # keep on the GPU
#   if step % log_every == 0:
#       print(torch.stack(metrics).mean().item())   # one sync per log_every
#       metrics.clear()
#   x_cpu = x.to("cpu", non_blocking=True)   # into pinned memory, no stall
#   ```
#
#   **Impact estimate.** `gpu_idle_sync_ratio`, the GPU idle time while the
#   host was in a sync, measured directly. The 5% threshold
#   (`min_idle_ratio`) is a stepdoctor default.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
#
#   **Relation to host-sync-in-step.** Exactly one of the two reports sync
#   idle time: host-sync-in-step when the host syncs at least its
#   `min_per_step` times per step, this rule otherwise.
# custom:
#   id: idle-gap-sync
#   severity: high
#   category: host-overhead
#   requires: [has_gpu, gpu_idle_sync_ratio]
#   examples: sync
#   params:
#     min_idle_ratio: 0.05
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization
#     - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
package stepdoctor.rules.idle_gap_sync

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.host_sync_in_step

params := data.stepdoctor.params["idle-gap-sync"]

why := " (the trace has no ProfilerStep spans, so syncs per step are unknown)" if input.sync_per_step == null
else := sprintf(" (%s syncs per step: rare but long ones)", [lib.fixed(input.sync_per_step, 1)])

top := sprintf("; most in %s", [lib.top_culprit("sync")]) if input.idle_culprits.sync[0]
else := ""

finding contains f if {
	not host_sync_in_step.claims
	idle := input.gpu_idle_sync_ratio
	idle >= params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s while the host waits in synchronizing calls or blocking copies%s%s", [lib.pct(idle), lib.of_time, why, top]),
		"impact": idle,
		"severity": lib.severity(idle, "high"),
		"evidence": [{"name": "gpu_idle_sync_ratio", "value": idle, "unit": "ratio"}],
	}
}
