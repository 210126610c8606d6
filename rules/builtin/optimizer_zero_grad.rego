# METADATA
# title: zero_grad fills every gradient with zeros
# description: |
#   **Why it matters.** `optimizer.zero_grad(set_to_none=False)` (or
#   `model.zero_grad()` on PyTorch before 2.0) runs one `aten::zero_` per
#   parameter every step: a dispatch and a fill kernel each, all memory
#   writes that the next backward overwrites anyway. With
#   `set_to_none=True` (the default since PyTorch 2.0) the gradients are
#   dropped and backward allocates them fresh, which costs nothing extra.
#   The PyTorch performance tuning guide recommends it.
#
#   **How to confirm.** In the trace viewer, `Optimizer.zero_grad#...` spans
#   hold one `aten::zero_` (and a fill kernel) per parameter.
#
#   **Fix.**
#
#   ```python
#   optimizer.zero_grad(set_to_none=True)     # or model.zero_grad(set_to_none=True)
#   # code that reads .grad before backward must accept None
#   ```
#
#   **Impact estimate.** The GPU idle time charged to
#   `Optimizer.zero_grad#...` spans (the optimizer cause's culprits in
#   `idle_culprits`), measured; without that breakdown,
#   `zero_grad_fill_per_step x fill_cost_us / mean step time` (5 us per
#   fill: a dispatch plus a kernel launch, a stepdoctor estimate). Never
#   more than the GPU idle time in optimizer spans
#   (`gpu_idle_optimizer_ratio`; without a GPU, `optimizer_time_ratio`).
#   That share is claimed here and subtracted from optimizer-foreach, so the
#   two never count the same time.
#
#   **Severity.** By impact: medium from 2%, low below (at most medium).
# custom:
#   id: optimizer-zero-grad
#   severity: medium
#   category: host-overhead
#   requires: [has_steps, zero_grad_fill_per_step, step_time_us]
#   confidence: likely
#   params:
#     min_fills_per_step: 1
#     fill_cost_us: 5
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-parameter-grad-none-instead-of-model-zero-grad-or-optimizer-zero-grad
package stepdoctor.rules.optimizer_zero_grad

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["optimizer-zero-grad"]

applies if input.zero_grad_fill_per_step >= params.min_fills_per_step

bound := input.gpu_idle_optimizer_ratio if input.gpu_idle_optimizer_ratio != null
else := input.optimizer_time_ratio if input.optimizer_time_ratio != null
else := 1

estimate := (input.zero_grad_fill_per_step * params.fill_cost_us) / input.step_time_us.mean if input.step_time_us.mean > 0
else := 0

# measured: the GPU idle charged to Optimizer.zero_grad#... spans (the
# optimizer cause's culprits), as a share of the window.
measured := sum([c.idle_us |
	some c in input.idle_culprits.optimizer
	startswith(c.name, "Optimizer.zero_grad#")
]) / input.window_us if {
	input.window_us > 0
	input.idle_culprits.optimizer
}

# claim: the optimizer idle time this rule owns (0 when it does not fire),
# read by optimizer-foreach. Measured when the trace charges idle time to
# zero_grad spans; else the fill-count estimate.
claim := min([measured, bound]) if {
	applies
	measured
} else := min([estimate, bound]) if applies
else := 0

finding contains f if {
	applies
	n := input.zero_grad_fill_per_step
	f := {
		"msg": sprintf("zero_grad fills %s gradients with zeros every step (set_to_none=False); use optimizer.zero_grad(set_to_none=True)", [lib.fixed(n, 0)]),
		"impact": claim,
		"severity": lib.severity(claim, "medium"),
		"evidence": [{"name": "zero_grad_fill_per_step", "value": n, "unit": "per_step"}],
	}
}
