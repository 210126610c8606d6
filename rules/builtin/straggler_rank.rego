# METADATA
# title: One rank makes the others wait at the collectives
# description: |
#   **Why it matters.** In data- and model-parallel training every rank
#   enters each collective (all-reduce, all-to-all) and NCCL cannot finish it
#   until the last rank arrives. The early ranks spin inside the NCCL kernel:
#   their GPU looks busy but does no work. One slow rank (a straggler) sets
#   the pace of all of them.
#
#   The engine aligns the k-th communication kernel of every rank (ranks
#   issue collectives in the same order) on the trace clocks and counts, per
#   rank, how often it starts last (`rank_last_arrival_ratio`). A rank that
#   is last at half the collectives or more is the straggler
#   (`rank_straggler`). HTA's straggler analysis reads the same signal: the
#   straggler has the shortest collective kernels, the others the longest.
#
#   **How to confirm.** Open this rank's trace next to a fast rank's: the
#   fast rank's `ncclKernel_*` spans are long (waiting), the straggler's are
#   short, and the straggler's host thread shows what delayed it (a longer
#   DataLoader fetch, a host sync, more compute, a noisy neighbour).
#
#   **Fix.** Remove what delays this rank, then balance the work:
#
#   ```python
#   # Uneven input: give every rank the same number of samples
#   sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)
#   # Uneven shapes (variable sequence length): bucket or pad to a fixed size
#   # Host-side stalls on this rank: more DataLoader workers, no .item() per step
#   ```
#
#   Also check the host itself (CPU frequency, other processes, a slower
#   NIC or PCIe link on that node).
#
#   **Impact estimate.** 0 on this rank's own window: the time is lost on
#   the other ranks, which wait a median `ranks_collective_wait_ratio` of
#   their window for the last arrival (quoted in the message). This rank's
#   own findings are what it must fix to keep pace; counting the others'
#   wait here would add time from other windows to this one's.
# custom:
#   id: straggler-rank
#   severity: high
#   category: distributed
#   requires: [rank_straggler, rank_last_arrival_ratio, ranks_collective_wait_ratio, rank_count]
#   confidence: confirmed
#   references:
#     - https://hta.readthedocs.io/en/latest/source/features/comm_comp_overlap.html
#     - https://pytorch.org/docs/stable/notes/ddp.html
#     - https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
package stepdoctor.rules.straggler_rank

import rego.v1

import data.stepdoctor.lib

rank := sprintf("rank %d", [input.rank]) if input.rank != null
else := "this rank"

finding contains f if {
	input.rank_straggler == true
	wait := input.ranks_collective_wait_ratio
	f := {
		"msg": sprintf("%s starts %s of the collectives last among %d ranks: the ranks wait a median %s %s for the last arrival. What delays this rank (its own findings, or work before the profiled window such as a late step start or a slow batch) sets every rank's step", [rank, lib.pct(input.rank_last_arrival_ratio), input.rank_count, lib.pct(wait), lib.of_time]),
		"impact": 0,
		"severity": "low",
		"evidence": [
			{"name": "rank_last_arrival_ratio", "value": input.rank_last_arrival_ratio, "unit": "ratio"},
			{"name": "ranks_collective_wait_ratio", "value": wait, "unit": "ratio"},
			{"name": "rank_count", "value": input.rank_count, "unit": "count"},
		],
	}
}
