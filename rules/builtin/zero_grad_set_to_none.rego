# METADATA
# title: zero_grad(set_to_none=False) writes zeros every step
# description: |
#   **Why it matters.** `set_to_none=False` fills every gradient with zeros
#   every step (a `_foreach_zero_` kernel per device and dtype, or a fill per
#   parameter without foreach) and makes backward accumulate
#   (read-modify-write) into the zeroed gradients. With `set_to_none=True` (the default since PyTorch 2.0) the
#   gradients are simply dropped and backward writes them fresh.
#
#   **Fix.**
#
#   ```python
#   optimizer.zero_grad()            # set_to_none=True by default
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `.zero_grad(...)` call with the literal
#   `set_to_none=False`. Not reported when the script writes gradients itself
#   (`p.grad = torch.zeros_like(p)`, `p.grad += g`, `p.grad.add_(g)`): such
#   code needs them to stay tensors, and would fail on `None`.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: zero-grad-set-to-none
#   severity: low
#   category: script
#   requires: [calls, features]
#   confidence: likely
#   params:
#     impact: 0.01
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-parameter-grad-none-instead-of-model-zero-grad-or-optimizer-zero-grad
#   trace:
#     same_cause: [optimizer-zero-grad]
package stepdoctor.rules.zero_grad_set_to_none

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["zero-grad-set-to-none"]

finding contains f if {
	some c in input.calls
	c.name == ".zero_grad"
	slib.literal(c.keywords.set_to_none, false)
	not writes_grads
	f := {
		"msg": "zero_grad(set_to_none=False) fills every gradient with zeros each step and makes backward accumulate into them; drop the argument",
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

# writes_grads holds when the script assigns or updates a .grad in place
# (features.grad_writes, or an in-place method such as p.grad.add_(g)):
# with set_to_none=True those gradients would be None.
writes_grads if count(input.features.grad_writes) > 0

writes_grads if {
	some c in input.calls
	endswith(c.receiver, ".grad")
	endswith(c.name, "_")
}
