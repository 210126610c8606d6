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
#   **Fix.** Fewer, larger, overlapped collectives, or a faster transport.
#   With many all-reduces per step (more than `max_few_allreduces`, 4),
#   larger DDP buckets merge them:
#
#   ```python variant=default
#   # larger gradient buckets: fewer all-reduces per step
#   model = DDP(model, bucket_cap_mb=100)
#   # accumulate gradients locally and all-reduce every k micro-batches
#   with model.no_sync():
#       loss.backward()          # k-1 micro-batches without communication
#   ```
#
#   With `max_few_allreduces` or fewer per step the gradients already go
#   in a few buckets: larger buckets change nothing. Communicate less
#   often, with fewer ranks, or fewer bytes:
#
#   ```python variant=few
#   # accumulate gradients locally and all-reduce every k micro-batches
#   for i, batch in enumerate(micro_batches):
#       ctx = model.no_sync() if (i + 1) % k else contextlib.nullcontext()
#       with ctx:
#           model(batch).loss.backward()  # all-reduce only on the k-th
#   # fewer ranks with more threads each (torch.set_num_threads): a gloo ring's
#   # latency grows with the ranks; or average within the node first
#   # (torch.distributed.algorithms.model_averaging.hierarchical_model_averager)
#   # compress the gradients: PowerSGD works with gloo
#   from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
#   model.register_comm_hook(powerSGD.PowerSGDState(process_group=None, matrix_approximation_rank=1),
#                            powerSGD.powerSGD_hook)
#   ```
#
#   A GPU job that all-reduces over gloo moves device tensors through the
#   host: use NCCL for them.
#
#   ```python variant=gpu
#   dist.init_process_group("nccl")              # or "cpu:gloo,cuda:nccl" for both
#   model = DDP(model.cuda(), device_ids=[local_rank])
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
#     max_few_allreduces: 4
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
# CPU-only job); NCCL calls on the host just enqueue kernels, also in a GPU
# job recorded without its GPU activity.
blocking if lib.cpu_job

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

# fix: NCCL only for a job with GPUs; with few all-reduces per step,
# larger buckets change nothing.
fix := "gpu" if input.has_gpu == true
else := "gpu" if input.gpu_activity_missing == true
else := "few" if input.allreduce_per_step <= params.max_few_allreduces
else := "default"

# few_note: why the fix does not lead with larger buckets.
few_note := sprintf("; with %s all-reduces per step larger buckets cannot cut their number: all-reduce less often (gradient accumulation under no_sync()), over fewer ranks, or fewer bytes (PowerSGD compression)", [lib.fixed(input.allreduce_per_step, 0)]) if fix == "few"
else := ""

finding contains f if {
	blocking
	not unbucketed_allreduce.claims
	exposed := input.host_comm_exposed_ratio
	exposed >= params.min_exposed_ratio
	f := {
		"msg": sprintf("Host-side collectives cover %s %s%s and %s is not overlapped by other CPU work: %s, %d calls on %d %s, %s%s%s", [
			lib.pct(input.host_comm_time_ratio), lib.of_time, ranks, lib.pct(exposed),
			top.name, top.calls, top.threads, lib.plural(top.threads, "thread", "threads"), lib.dur(top.time_us), busy_note, few_note,
		]),
		"fix": fix,
		"impact": exposed,
		"severity": lib.severity(exposed, "high"),
		"evidence": [
			{"name": "host_comm_time_ratio", "value": input.host_comm_time_ratio, "unit": "ratio"},
			{"name": "host_comm_exposed_ratio", "value": exposed, "unit": "ratio"},
			{"name": "allreduce_per_step", "value": input.allreduce_per_step, "unit": "per_step"},
		],
	}
}
