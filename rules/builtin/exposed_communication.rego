# METADATA
# title: Communication not hidden behind compute
# description: |
#   **Why it matters.** In data-parallel training, DDP and FSDP overlap the
#   gradient all-reduce (or reduce-scatter / all-gather) with the backward
#   pass: buckets are reduced while later layers still compute. Collective
#   kernels (NCCL/RCCL) that run while no compute kernel runs are exposed:
#   the step waits for the network. Exposed time also includes waiting for
#   slower ranks (stragglers, rank imbalance), which shows up as long
#   collectives on the fast ranks. HTA's communication/computation overlap
#   analysis measures the same; fires when exposed communication is at
#   least 5% of the time (`min_exposed_ratio`, a stepdoctor default), in a
#   window with at least 10 kernels (`min_kernels`: a handful of kernels is
#   not a training or inference step to judge).
#
#   **How to confirm.** In the trace viewer, `ncclDevKernel_*` /
#   `ncclKernel_*` on the communication stream with the compute stream
#   empty. Compare the ranks' traces: a long collective on one rank and a
#   short one on another means the first waits for the second.
#
#   **Fix.**
#
#   ```python variant=default
#   model = DDP(model, device_ids=[rank],
#               bucket_cap_mb=50,               # tune: larger buckets, fewer collectives
#               gradient_as_bucket_view=True)
#   # gradient accumulation: skip the all-reduce on all but the last micro-batch
#   for i, micro in enumerate(micro_batches):
#       ctx = model.no_sync() if i < len(micro_batches) - 1 else contextlib.nullcontext()
#       with ctx:
#           model(micro).loss.backward()
#   # FSDP: backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True
#   ```
#
#   When most of the exposed time is waiting for the last rank to arrive
#   (the collectives start far apart across ranks and end together), the
#   network is not the problem: one rank enters the collective late. Fix
#   what makes that rank slow (its own findings), balance the work (uneven
#   batches, embedding shards, sequence lengths), and profile several steps
#   so one late start is not mistaken for a pattern:
#
#   ```python variant=skew
#   # every rank, the same steps:
#   schedule = torch.profiler.schedule(wait=5, warmup=2, active=5)
#   # then analyze the ranks together to see who arrives last and why:
#   #   stepdoctor analyze ./log/     (one trace per rank)
#   ```
#
#   Balance work across ranks (same sequence lengths per rank, even
#   embedding shards) when one rank's trace is consistently slower.
#
#   When the ranks were analyzed together, the message names the rank that
#   arrives last (`ranks_straggler`), and its own findings are the fix:
#
#   ```python variant=skew-ranks
#   # The straggler sets every rank's step: fix what delays it (its own
#   # findings in this report: host overhead, data loading, more work),
#   # then give every rank the same work:
#   sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)
#   # uneven shapes (sequence lengths, embedding shards): bucket or pad them evenly
#   ```
#
#   On the straggler itself, the exposed communication is mostly waiting at
#   the collectives where another rank is later, or a short transfer:
#   bucket and overlap tuning does not shorten it. What the other ranks
#   wait for is this rank's own time:
#
#   ```python variant=straggler
#   # This rank is the one the others wait for: fix its own findings first
#   # (host overhead, data loading, a host sync per step), then balance work:
#   sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)
#   ```
#
#   One rank's trace alone does not show when the others arrived, but a
#   collective that runs far longer than its bytes need is waiting for
#   them. Each process group's calls in the collectives table
#   (`collective_stats`) get a generous transfer budget: `transfer_call_us`
#   (100 us) a call, several times NCCL's small-message latency, plus their
#   bus bytes at `transfer_link_share` (10%) of the link's peak
#   (`device_peak.link_bytes_per_s`). Exposed time beyond that budget is
#   waiting for a peer rank; when it is at least half the exposed time, the
#   message says so, with the group's bytes, time and bus bandwidth, and
#   the fix is the one above (thresholds are stepdoctor defaults).
#
#   **Impact estimate.** `exposed_comm_ratio`, the collective time not
#   overlapped by compute: an upper bound, since part of it may be
#   straggler wait or bandwidth that no overlap hides. Likely. The part
#   slow-collective-bandwidth claims (a large collective far below the
#   link's bus bandwidth, whose fix is NCCL's transport, not overlap) is
#   subtracted and the message names that group. This is GPU busy time, so
#   it never overlaps the idle-time rules.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: exposed-communication
#   severity: high
#   category: distributed
#   requires: [comm_kernel_time_ratio, exposed_comm_ratio, kernel_count]
#   examples: comm
#   confidence: likely
#   params:
#     min_exposed_ratio: 0.05
#     min_kernels: 10
#     transfer_call_us: 100
#     transfer_link_share: 0.1
#   references:
#     - https://hta.readthedocs.io/en/latest/source/features/comm_comp_overlap.html
#     - https://pytorch.org/docs/stable/notes/ddp.html
#     - https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
package stepdoctor.rules.exposed_communication

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.slow_collective_bandwidth
import data.stepdoctor.rules.unbucketed_allreduce

params := data.stepdoctor.params["exposed-communication"]

ranks := sprintf(" (rank %d of %d)", [input.rank, input.world_size]) if {
	input.rank != null
	input.world_size != null
} else := ""

# Measured directly: confirmed when most communication runs alone.
confidence := "confirmed" if lib.num(input.comm_overlap_ratio) < 0.5
else := "likely"

# waiting: the part of the exposed time this rank waits for the last rank
# to arrive (ranks analyzed together).
waiting := min([input.rank_collective_wait_ratio, input.exposed_comm_ratio]) if input.rank_collective_wait_ratio != null

# late: most of the exposed time is this rank waiting for another; the
# straggler itself waits for nobody.
late if {
	waiting >= 0.5 * input.exposed_comm_ratio
	input.rank_straggler != true
}

# One rank alone cannot see the others arrive, but a collective that takes
# far longer than its bytes need cannot be transfer time. transfer_us(r)
# is a generous budget for a group's calls: transfer_call_us a call (NCCL's
# small-message latency is tens of microseconds) plus its bus bytes at
# transfer_link_share of the link's peak. The rest of its exposed time is
# waiting for a peer rank (alone_wait_us).
link := lib.num(input.device_peak.link_bytes_per_s)

transfer_us(r) := (r.sized_count * params.transfer_call_us) + ((((r.busbw_gbps * 1e9) * r.sized_time_us) / 1e6) / (params.transfer_link_share * link)) * 1e6

alone_wait_us(r) := min([r.exposed_us, max([0, r.sized_time_us - transfer_us(r)])])

alone_waits contains [alone_wait_us(r), i] if {
	input.rank_collective_wait_ratio == null
	link > 0
	some i, r in input.collective_stats
	r.sized_count > 0
	r.busbw_gbps != null
	alone_wait_us(r) > 0
}

alone_wait := sum([w[0] | some w in alone_waits]) / input.window_us if {
	count(alone_waits) > 0
	input.window_us > 0
} else := 0

alone_late if {
	not late
	alone_wait >= 0.5 * input.exposed_comm_ratio
}

# The group that waits longest, for the message.
alone_worst := input.collective_stats[max(alone_waits)[1]]

kb(b) := sprintf("%s KB", [lib.fixed(round(b / 1e2) / 10, 1)]) if b < 1e6
else := sprintf("%s MB", [lib.fixed(round(b / 1e5) / 10, 1)])

skew_note := sprintf("; %s %s is waiting for the last rank to arrive (collective starts up to %s apart across %d ranks): a late rank, not the network%s", [
	lib.pct(waiting), lib.of_time, lib.dur(input.collective_skew_us.max), input.rank_count, straggler_named,
]) if late
else := sprintf("; this rank is the straggler: the others wait for it at most collectives (straggler-rank); at the rest it waits %s %s for a later rank, and the other %s of its exposed communication is transfer time", [lib.pct(waiting), lib.of_time, lib.pct(max([0, input.exposed_comm_ratio - waiting]))]) if {
	input.rank_straggler == true
	waiting >= 0.005
} else := sprintf("; this rank is the straggler: the others wait for it at the collectives (straggler-rank), and its own %s of exposed communication is transfer time", [lib.pct(input.exposed_comm_ratio)]) if input.rank_straggler == true
else := sprintf("; at least %s %s is waiting for a peer rank, not transfer: %s's %d calls moved %s in %s (%s GB/s bus bandwidth against %s GB/s per direction on %s), far longer than the bytes need, so another rank arrived late; analyze all ranks together (stepdoctor analyze DIR) to find which", [
	lib.pct(alone_wait), lib.of_time, alone_worst.kind, alone_worst.sized_count, kb(alone_worst.bytes), lib.dur(alone_worst.sized_time_us),
	lib.fixed(alone_worst.busbw_gbps, 3), lib.fixed(link / 1e9, 0), input.device_peak.link,
]) if alone_late
else := ""

# bw_note names a group whose bus bandwidth is far below the link's
# (slow-collective-bandwidth owns that part of the exposed time).
bw_note := sprintf("; the slowest group is %s (slow-collective-bandwidth claims %s of it)", [slow_collective_bandwidth.summary, lib.pct(slow_collective_bandwidth.claim)]) if {
	slow_collective_bandwidth.claim > 0
} else := ""

# host_wait_note: while the rank waits for its peers, the host often
# blocks too, in a sync on the collective's output (DLRM's all-to-all
# splits read with .item() or a blocking copy).
host_wait_note := sprintf("; the host blocks behind it as well: %s %s in device syncs", [lib.pct(input.sync_time_ratio), lib.of_time]) if {
	late_any
	input.sync_time_ratio >= 0.1
} else := ""

late_any if late

late_any if alone_late

# straggler_named names the rank the others wait for, when one is.
straggler_named := sprintf("; rank %d starts most of the collectives last (straggler-rank): its own findings are what to fix", [input.ranks_straggler]) if input.ranks_straggler != null
else := ""

fix := "skew-ranks" if late
else := "straggler" if input.rank_straggler == true
else := "skew" if alone_late
else := "default"

finding contains f if {
	not unbucketed_allreduce.claims
	exposed := input.exposed_comm_ratio
	exposed >= params.min_exposed_ratio
	input.comm_overlap_ratio != null
	input.kernel_count >= params.min_kernels
	f := {
		"msg": sprintf("Communication kernels run %s %s%s and only %s of that overlaps compute: %s is exposed communication%s%s%s", [lib.pct(input.comm_kernel_time_ratio), lib.of_time, ranks, lib.pct(input.comm_overlap_ratio), lib.pct(exposed), skew_note, host_wait_note, bw_note]),
		"fix": fix,
		"impact": max([0, exposed - slow_collective_bandwidth.claim]),
		"confidence": confidence,
		"severity": lib.severity(exposed, "high"),
		"evidence": [
			{"name": "exposed_comm_ratio", "value": exposed, "unit": "ratio"},
			{"name": "comm_kernel_time_ratio", "value": input.comm_kernel_time_ratio, "unit": "ratio"},
			{"name": "comm_overlap_ratio", "value": input.comm_overlap_ratio, "unit": "ratio"},
		],
	}
}
