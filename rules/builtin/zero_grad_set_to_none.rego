# METADATA
# title: zero_grad(set_to_none=False) writes zeros every step
# description: |
#   **Why it matters.** `set_to_none=False` launches a memset per parameter
#   every step and makes backward accumulate (read-modify-write) into the zeroed
#   gradients. With `set_to_none=True` (the default since PyTorch 2.0) the
#   gradients are simply dropped and backward writes them fresh.
#
#   **Fix.**
#
#   ```python
#   optimizer.zero_grad()            # set_to_none=True by default
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `.zero_grad(...)` call with the literal
#   `set_to_none=False`.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: zero-grad-set-to-none
#   severity: low
#   category: script
#   requires: [calls]
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
	f := {
		"msg": "zero_grad(set_to_none=False) launches a memset per parameter and accumulating backward writes; drop the argument",
		"impact": params.impact,
		"location": slib.loc(c),
	}
}
