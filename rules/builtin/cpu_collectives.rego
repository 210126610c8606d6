# METADATA
# title: Collectives on the host (gloo) take the step
# description: |
#   **Why it matters.** With the gloo backend (CPU training, or CPU tensors
#   in a GPU job) every all-reduce runs on host threads: the step waits
#   until the slowest rank's gradients arrive and are summed on the CPU.
#   When those calls cover most of the step and nothing else runs
#   meanwhile, the job is communication-bound, whatever the model does.
#
#   **How to confirm.** The trace viewer shows `gloo:all_reduce` (or other
#   `gloo:` collectives) on communication threads spanning most of each
#   step; compare ranks: a rank that arrives late makes every other rank's
#   collectives long.
#
#   **Fix.** Fewer, larger, overlapped collectives, or a faster transport:
#
#   ```python
#   # larger gradient buckets: fewer all-reduces per step
#   model = DDP(model, bucket_cap_mb=100)
#   # accumulate gradients locally and all-reduce every k micro-batches
#   with model.no_sync():
#       loss.backward()          # k-1 micro-batches without communication
#   # on GPUs, use NCCL for device tensors
#   dist.init_process_group("nccl")
#   ```
#
#   Also check the network (gloo over TCP on a slow interface:
#   `GLOO_SOCKET_IFNAME`) and stragglers among the ranks.
#
#   **Impact estimate.** `host_comm_exposed_ratio`, the collective time no
#   other CPU operator overlaps: measured directly, the time overlap or
#   fewer collectives can give back.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: cpu-collectives
#   severity: high
#   category: distributed
#   requires: [host_comm_time_ratio, host_comm_exposed_ratio]
#   examples: comm
#   params:
#     min_exposed_ratio: 0.05
#   references:
#     - https://pytorch.org/docs/stable/distributed.html#backends
#     - https://pytorch.org/docs/stable/notes/ddp.html
#     - https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
package stepdoctor.rules.cpu_collectives

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.unbucketed_allreduce

params := data.stepdoctor.params["cpu-collectives"]

# Host collectives block only without GPU kernels for them (gloo, or a
# CPU-only job); NCCL calls on the host just enqueue kernels.
blocking if input.has_gpu == false

blocking if startswith(input.host_comm_top[0].name, "gloo:")

top := input.host_comm_top[0]

ranks := sprintf(" (rank %d of %d)", [input.rank, input.world_size]) if {
	input.rank != null
	input.world_size != null
} else := ""

# busy_note: the calls' time summed over their threads; on several threads
# it can exceed the step, so it is named as thread time.
busy_note := sprintf(" of thread time (%s per step, summed over the threads; the collectives cover %s per step)", [lib.dur(top.time_us / input.steps_count), lib.dur((input.host_comm_time_ratio * input.window_us) / input.steps_count)]) if {
	top.threads > 1
	input.steps_count > 0
} else := lib.per_step(top.time_us)

finding contains f if {
	blocking
	not unbucketed_allreduce.claims
	exposed := input.host_comm_exposed_ratio
	exposed >= params.min_exposed_ratio
	f := {
		"msg": sprintf("Host-side collectives cover %s %s%s and %s is not overlapped by other CPU work: %s, %d calls on %d %s, %s%s", [
			lib.pct(input.host_comm_time_ratio), lib.of_time, ranks, lib.pct(exposed),
			top.name, top.calls, top.threads, lib.plural(top.threads, "thread", "threads"), lib.dur(top.time_us), busy_note,
		]),
		"impact": exposed,
		"severity": lib.severity(exposed, "high"),
		"evidence": [
			{"name": "host_comm_time_ratio", "value": input.host_comm_time_ratio, "unit": "ratio"},
			{"name": "host_comm_exposed_ratio", "value": exposed, "unit": "ratio"},
			{"name": "allreduce_per_step", "value": lib.num(input.allreduce_per_step), "unit": "per_step"},
		],
	}
}
