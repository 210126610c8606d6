# METADATA
# title: GPU idle while the host waits for the DataLoader
# description: |
#   **Why it matters.** The launching thread was inside
#   `enumerate(DataLoader)#...__next__` while the GPU had nothing to do: the
#   next batch was not ready. dataloader-bound reports this for profiled
#   steps; this rule reports the same idle time when that rule does not
#   apply, mostly traces without ProfilerStep spans, where the DataLoader's
#   share of step time is unknown.
#
#   **How to confirm.** In the trace viewer, the `enumerate(DataLoader)`
#   spans on the main thread line up with gaps in the GPU rows.
#
#   **Fix.** Prepare batches in worker processes, ahead of time:
#
#   ```python
#   loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size,
#       num_workers=8, persistent_workers=True, pin_memory=True,
#       prefetch_factor=4)
#   ```
#
#   and add `prof.step()` to the loop so the next trace has steps.
#
#   **Impact estimate.** `gpu_idle_dataloader_ratio`, measured directly. The
#   5% threshold (`min_idle_ratio`) matches the TensorBoard profiler
#   plugin's DataLoader recommendation.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
#
#   **Relation to dataloader-bound.** Exactly one of the two reports the
#   DataLoader's idle time: dataloader-bound when the DataLoader share of
#   step time exceeds its `min_ratio`, this rule otherwise.
# custom:
#   id: idle-gap-dataloader
#   severity: high
#   category: input-pipeline
#   requires: [has_gpu, gpu_idle_dataloader_ratio]
#   examples: dataloader
#   params:
#     min_idle_ratio: 0.05
#   references:
#     - https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading
#     - https://github.com/pytorch/kineto/tree/main/tb_plugin
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
package stepdoctor.rules.idle_gap_dataloader

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.dataloader_bound

params := data.stepdoctor.params["idle-gap-dataloader"]

finding contains f if {
	not dataloader_bound.claims
	idle := input.gpu_idle_dataloader_ratio
	idle >= params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s while the host waits for the next batch from the DataLoader", [lib.pct(idle), lib.of_time]),
		"impact": idle,
		"severity": lib.severity(idle, "high"),
		"evidence": [{"name": "gpu_idle_dataloader_ratio", "value": idle, "unit": "ratio"}],
	}
}
