# METADATA
# title: Fixed per-step costs dominate a small batch
# description: |
#   **Why it matters.** The optimizer step and `zero_grad` cost the same
#   whatever the batch size: they touch every parameter once per step. When
#   they take a large share of each step, the step does little work per
#   sample, and a larger batch spreads that fixed cost over more samples
#   (on the GPU, a small batch also shows as many tiny kernels).
#
#   **How to confirm.** `Optimizer.step#...` and `Optimizer.zero_grad#...`
#   spans cover the share of each step named in the finding; doubling the
#   batch leaves their duration unchanged.
#
#   **Fix.** Raise the batch size, or accumulate gradients over several
#   micro-batches and step once:
#
#   ```python
#   loader = DataLoader(dataset, batch_size=4 * batch_size, ...)   # and scale the learning rate
#   # or keep the batch and step every k micro-batches
#   for i, (x, y) in enumerate(loader):
#       loss = model(x, y) / k
#       loss.backward()
#       if (i + 1) % k == 0:
#           opt.step()
#           opt.zero_grad(set_to_none=True)
#   ```
#
#   **Impact estimate.** On a CPU job, `(optimizer_time_ratio - what
#   optimizer-foreach claims) x 0.5`: the per-sample share of the optimizer
#   halves when the batch doubles (measured optimizer time); a single-tensor
#   optimizer's per-parameter dispatch is fixed by `foreach=True` first. On a GPU job 0: the GPU idle during the
#   optimizer is optimizer-foreach's and optimizer-zero-grad's, and the
#   tiny kernels launch-bound's.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: small-batch
#   severity: high
#   category: host-overhead
#   requires: [has_steps, has_backward, optimizer_time_ratio]
#   confidence: likely
#   params:
#     min_optimizer_ratio: 0.3
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://pytorch.org/docs/stable/optim.html
package stepdoctor.rules.small_batch

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.optimizer_foreach

params := data.stepdoctor.params["small-batch"]

impact := max([0, input.optimizer_time_ratio - optimizer_foreach.claim]) * 0.5 if lib.cpu_job
else := 0

first := "; the optimizer also runs the single-tensor implementation: pass foreach=True first (optimizer-foreach)" if optimizer_foreach.claim > 0
else := ""

finding contains f if {
	input.optimizer_time_ratio >= params.min_optimizer_ratio
	f := {
		"msg": sprintf("Optimizer.step and zero_grad take %s %s: fixed per-step costs dominate a small batch; a larger batch (or gradient accumulation) spreads them over more samples%s", [
			lib.pct(input.optimizer_time_ratio), lib.of_time, first,
		]),
		"impact": impact,
		"severity": lib.severity(impact, "high"),
		"evidence": [{"name": "optimizer_time_ratio", "value": input.optimizer_time_ratio, "unit": "ratio"}],
	}
}
