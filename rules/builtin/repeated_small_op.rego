# METADATA
# title: One tiny operator called hundreds of times per step
# description: |
#   **Why it matters.** Each call from Python into a PyTorch operator costs
#   the host a fixed few microseconds (argument parsing, dispatch, allocation,
#   a kernel launch) however little data it touches. An operator called
#   hundreds of times per step with a mean duration under 20 us is almost
#   all overhead: typically a Python loop over list elements, samples or
#   parameters (`torch.stack` of many small tensors built one by one,
#   per-element indexing, `tensor[i] = ...` in a loop).
#
#   **How to confirm.** In the operator table (report or
#   `prof.key_averages().table(sort_by="count")`), the top operator by calls
#   has hundreds of calls per step and a tiny mean time. With
#   `with_stack=True` (`group_by_stack_n=5`) the call stack names the loop.
#
#   **Fix.** Batch the work into one call:
#
#   ```python
#   # before: many tiny ops in a Python loop
#   out = torch.stack([f(x[i]) for i in range(n)])
#   # after: one vectorised call
#   out = f(x)                      # or torch.vmap(f)(x)
#
#   # build a batch once instead of concatenating piece by piece
#   parts = [...]                   # collect in a list
#   batch = torch.cat(parts)        # one torch.cat, not n torch.stack/copies
#
#   # many parameters: use the multi-tensor helpers
#   torch._foreach_mul_(params, 0.9)
#   ```
#
#   **Impact estimate.** The time these calls take
#   (`repeated_small_op_time_ratio`), of which only the part where the GPU
#   is idle waiting on the host is recoverable on a GPU: min(time ratio,
#   `gpu_idle_launch_ratio + gpu_idle_cpu_op_ratio`). That part is claimed
#   here and subtracted from launch-bound / idle-gap-launch, so the same
#   idle time is never counted twice. CPU-only traces count the whole time.
#   Likely: which of the calls' time overlaps the GPU's idle gaps is
#   inferred, not measured. The threshold of 100 calls per step
#   (`min_calls_per_step`) is a stepdoctor default ("hundreds of tiny
#   calls").
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below (at
#   most medium).
# custom:
#   id: repeated-small-op
#   severity: medium
#   category: host-overhead
#   requires: [has_steps, repeated_small_op_calls_per_step, repeated_small_op_time_ratio]
#   confidence: likely
#   params:
#     min_calls_per_step: 100
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://pytorch.org/docs/stable/generated/torch.vmap.html
#     - https://pytorch.org/tutorials/recipes/recipes/profiler_recipe.html
package stepdoctor.rules.repeated_small_op

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["repeated-small-op"]

applies if {
	input.repeated_small_op_calls_per_step >= params.min_calls_per_step
	not optimizer_op
}

# optimizer_op holds for a per-parameter update op of a single-tensor
# optimizer: optimizer-foreach owns that time.
optimizer_op if {
	input.optimizer_single_tensor == true
	input.repeated_small_op_name in lib.optimizer_update_ops
}

host_idle := lib.host_issue_idle if {
	input.gpu_idle_launch_ratio != null
	input.gpu_idle_cpu_op_ratio != null
}

# claim: the idle time this rule owns (0 when it does not fire), read by
# launch-bound and idle-gap-launch.
claim := min([input.repeated_small_op_time_ratio, host_idle]) if {
	applies
	host_idle
} else := input.repeated_small_op_time_ratio if {
	applies
	lib.cpu_job
} else := 0

op_name := input.repeated_small_op_name if input.repeated_small_op_name
else := "One host operator"

finding contains f if {
	applies
	n := input.repeated_small_op_calls_per_step
	f := {
		"msg": sprintf("%s is called %s times per step with a mean under 20 us; those calls take %s %s", [op_name, lib.fixed(n, 0), lib.pct(input.repeated_small_op_time_ratio), lib.of_time]),
		"impact": claim,
		"severity": lib.severity(claim, "medium"),
		"evidence": [
			{"name": "repeated_small_op_calls_per_step", "value": n, "unit": "per_step"},
			{"name": "repeated_small_op_time_ratio", "value": input.repeated_small_op_time_ratio, "unit": "ratio"},
		],
	}
}
