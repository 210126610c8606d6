# METADATA
# title: This rank has more compute per step than the others
# description: |
#   **Why it matters.** Ranks synchronize at every collective, so the rank
#   with the most GPU work per step sets the step time for all. Compute that
#   differs between ranks comes from uneven work: unequal batch sizes or
#   sequence lengths, embedding tables or pipeline stages of different
#   sizes, or a slower GPU.
#
#   The engine compares each rank's compute kernel time per step (kernels
#   other than NCCL/RCCL) with the median across the ranks analyzed
#   together (`rank_compute_over_median`); the rule fires at 10% over the
#   median and names the rank.
#
#   **How to confirm.** In the per-rank table, compare compute per step; in
#   the traces, compare the top kernels of this rank and a median rank: the
#   same kernels running longer mean bigger inputs, extra kernels mean extra
#   work (for example a larger embedding shard).
#
#   **Fix.** Balance the work across ranks:
#
#   ```python
#   # Equal samples per rank
#   sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)
#   # Variable-length inputs: bucket by length so ranks get similar shapes
#   # Sharded models: rebalance embedding tables / pipeline stages by measured cost
#   ```
#
#   **Impact estimate.** The extra compute over the median, as a share of
#   this rank's window: `compute_kernel_time_ratio x (1 - 1 /
#   rank_compute_over_median)`.
# custom:
#   id: rank-imbalance
#   severity: medium
#   category: distributed
#   requires: [rank_compute_over_median, ranks_compute_spread_ratio, compute_kernel_time_ratio, rank_count]
#   confidence: confirmed
#   params:
#     min_over_median: 1.1
#   references:
#     - https://pytorch.org/docs/stable/notes/ddp.html
#     - https://hta.readthedocs.io/en/latest/source/features/temporal_breakdown.html
package stepdoctor.rules.rank_imbalance

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["rank-imbalance"]

rank := sprintf("rank %d", [input.rank]) if input.rank != null
else := "this rank"

finding contains f if {
	over := input.rank_compute_over_median
	over >= params.min_over_median
	impact := input.compute_kernel_time_ratio * (1 - (1 / over))
	f := {
		"msg": sprintf("%s runs %s more compute per step than the median of %d ranks (spread across ranks %s)", [rank, lib.pct(over - 1), input.rank_count, lib.pct(input.ranks_compute_spread_ratio)]),
		"impact": impact,
		"severity": lib.severity(impact, "medium"),
		"evidence": [
			{"name": "rank_compute_over_median", "value": over, "unit": "ratio"},
			{"name": "ranks_compute_spread_ratio", "value": input.ranks_compute_spread_ratio, "unit": "ratio"},
			{"name": "compute_kernel_time_ratio", "value": input.compute_kernel_time_ratio, "unit": "ratio"},
		],
	}
}
