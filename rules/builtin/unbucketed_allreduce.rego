# METADATA
# title: One all-reduce per parameter
# description: |
#   **Why it matters.** DDP groups gradients into buckets (25 MB by
#   default) and all-reduces each bucket as soon as it is ready, overlapping
#   communication with the rest of the backward pass. Hundreds of
#   all-reduces per step mean one per parameter: bucketing is defeated
#   (`bucket_cap_mb` tiny, `find_unused_parameters` forcing per-parameter
#   work) or gradients are reduced in a hand-written loop. Each collective
#   pays its launch and latency cost, and small messages use the network
#   poorly.
#
#   **How to confirm.** Count the all-reduce kernels (NCCL
#   `ncclKernel_AllReduce...` / `ncclDevKernel_AllReduce...`) or
#   `c10d::allreduce_` calls per step in the trace; compare with the number
#   of parameters (`len(list(model.parameters()))`).
#
#   **Fix.** Let DDP bucket, or bucket by hand:
#
#   ```python
#   model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
#   # instead of
#   # for p in model.parameters():
#   #     dist.all_reduce(p.grad)
#   # or, by hand, flatten first:
#   grads = [p.grad for p in model.parameters()]
#   flat = torch._utils._flatten_dense_tensors(grads)
#   dist.all_reduce(flat)
#   for g, s in zip(grads, torch._utils._unflatten_dense_tensors(flat, grads)):
#       g.copy_(s)
#   ```
#
#   **Impact estimate.** The exposed communication time
#   (`exposed_comm_ratio`, or `host_comm_exposed_ratio` on CPU jobs), which
#   this rule claims in place of exposed-communication and cpu-collectives:
#   the time fewer, larger, overlapped all-reduces can give back.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: unbucketed-allreduce
#   severity: high
#   category: distributed
#   requires: [has_steps, allreduce_per_step]
#   params:
#     min_per_step: 64
#   references:
#     - https://pytorch.org/docs/stable/notes/ddp.html#internal-design
#     - https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
package stepdoctor.rules.unbucketed_allreduce

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["unbucketed-allreduce"]

# claims: read by exposed-communication and cpu-collectives, which stay
# quiet when this rule owns the exposed communication.
claims if input.allreduce_per_step >= params.min_per_step

exposed := input.exposed_comm_ratio if input.exposed_comm_ratio != null
else := lib.num(input.host_comm_exposed_ratio)

params_note := sprintf(", as many as the optimizer's per-parameter ops (%s)", [lib.fixed(input.optimizer_ops_per_step, 0)]) if {
	input.optimizer_ops_per_step != null
	abs(input.optimizer_ops_per_step - input.allreduce_per_step) <= 0.05 * input.allreduce_per_step
} else := ""

overlap_note := sprintf("; %s of communication overlaps compute, %s of the step is exposed", [lib.pct(input.comm_overlap_ratio), lib.pct(exposed)]) if input.comm_overlap_ratio != null
else := sprintf("; %s of the step is exposed communication", [lib.pct(exposed)])

finding contains f if {
	claims
	f := {
		"msg": sprintf("%s all-reduces per step%s: one per parameter, so DDP gradient bucketing is off or gradients are reduced in a loop%s", [
			lib.fixed(input.allreduce_per_step, 0), params_note, overlap_note,
		]),
		"impact": exposed,
		"severity": lib.severity(exposed, "high"),
		"evidence": [
			{"name": "allreduce_per_step", "value": input.allreduce_per_step, "unit": "per_step"},
			{"name": "exposed_comm_ratio", "value": exposed, "unit": "ratio"},
			{"name": "optimizer_ops_per_step", "value": input.optimizer_ops_per_step, "unit": "per_step"},
		],
	}
}
