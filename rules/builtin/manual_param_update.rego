# METADATA
# title: Parameters updated one at a time in a Python loop
# description: |
#   **Why it matters.** A hand-written update such as
#   `for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)` runs in
#   the step loop as one in-place op, so one kernel launch and one trip
#   through the dispatcher, per parameter per step: a few hundred small
#   kernels for a mid-sized model, each of which the host must issue. The
#   multi-tensor (`torch._foreach_*`) ops, which the foreach and fused
#   optimizers use, update every parameter in a few kernels.
#
#   **Fix.**
#
#   ```python
#   params = [p for p in model.parameters() if p.grad is not None]
#   with torch.no_grad():
#       torch._foreach_add_(params, [p.grad for p in params], alpha=-lr)
#   # or let an optimizer do it: torch.optim.SGD(model.parameters(), lr=lr, foreach=True)
#   # gradients scaled by hand: torch._foreach_mul_([p.grad for p in params], 1.0 / n)
#   ```
#
#   **How to confirm.** What stepdoctor matches: In a script that uses a
#   GPU, an in-place op (`add_`, `sub_`, `mul_`, `div_`, `addcmul_`,
#   `addcdiv_`, `copy_`, `zero_`) inside a `for` loop over
#   `<x>.parameters()` (or `named_parameters()`) that itself runs every step
#   (inside a step loop or a step function), on a parameter's `.data` or
#   `.grad`, or reading a `.grad`; one finding per loop. In a trace this
#   shows as a long run of tiny elementwise kernels after the backward pass
#   (`elementwise-fusion`, `launch-bound`).
#
#   **Impact estimate.** The script alone measures nothing, so the impact
#   is a prior: 2% of step time (`impact`), with confidence "likely".
# custom:
#   id: manual-param-update
#   severity: low
#   category: script
#   requires: [calls, loops, features]
#   confidence: likely
#   params:
#     impact: 0.02
#   references:
#     - https://pytorch.org/docs/stable/optim.html#algorithms
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
package stepdoctor.rules.manual_param_update

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["manual-param-update"]

inplace := {".add_", ".sub_", ".mul_", ".div_", ".addcmul_", ".addcdiv_", ".copy_", ".zero_"}

# updates holds each per-parameter in-place op of a parameter loop that
# runs every step: [loop, line, column, call].
updates contains [c.loop, c.line, c.column, c] if {
	some c in input.calls
	c.name in inplace
	c.step_loop >= 0
	c.loop >= 0
	c.loop != c.step_loop
	l := input.loops[c.loop]
	l.kind == "for"
	regex.match(`\.(named_)?parameters\(\)$`, l.iter)
	touches_param(c)
}

touches_param(c) if regex.match(`\.(data|grad)\b`, c.receiver)

touches_param(c) if {
	some a in c.args
	contains(a.text, ".grad")
}

touches_param(c) if {
	some _, v in c.keywords
	contains(v.text, ".grad")
}

finding contains f if {
	slib.uses_gpu(input.features)
	some loop in {u[0] | some u in updates}
	first := min({[u[1], u[2]] | some u in updates; u[0] == loop})
	some u in updates
	u[0] == loop
	[u[1], u[2]] == first
	c := u[3]
	l := input.loops[loop]
	f := {
		"msg": sprintf("%s runs on each parameter in a Python loop over %s (line %d), every step (%s): one kernel launch per parameter; torch._foreach_%s (or an optimizer with foreach=True) updates them all in a few kernels", [
			c.text, l.iter, l.line, slib.step_where(input.loops, c.step_loop), trim_prefix(c.name, "."),
		]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}
