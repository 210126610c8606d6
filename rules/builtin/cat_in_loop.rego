# METADATA
# title: torch.cat / torch.stack grows a tensor inside a loop
# description: |
#   **Why it matters.** `x = torch.cat([x, y])` in a loop copies everything
#   gathered so far at every iteration (quadratic time and memory traffic), and a
#   cat or stack in a loop nested inside the step loop launches one small kernel
#   per inner iteration.
#
#   **Fix.** Collect in a Python list and concatenate once, or preallocate:
#
#   ```python
#   parts = []
#   for k in range(n):
#       parts.append(row(k))
#   out = torch.cat(parts)           # one copy
#   # or: out = torch.empty(n, d, device=device); out[k] = row(k)
#   ```
#
#   **How to confirm.** What stepdoctor matches: `torch.cat`, `torch.concat`,
#   `torch.concatenate`, `torch.stack`, `torch.hstack` or `torch.vstack` in a
#   loop, where the result is assigned to a name inside its own list or tuple
#   argument (`x = torch.cat([x, y])`; `losses = torch.cat(losses)` on a list,
#   the recommended pattern, is not reported), or the call sits in a loop nested
#   inside a step loop. A growing sequence in a decoding loop (not a step loop,
#   but one that calls a model: autoregressive generation) is not reported.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: cat-in-loop
#   severity: low
#   category: script
#   requires: [calls]
#   confidence: likely
#   params:
#     impact: 0.01
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.cat.html
#     - https://pytorch.org/docs/stable/generated/torch.stack.html
#   trace:
#     same_cause: [repeated-small-op]
package stepdoctor.rules.cat_in_loop

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["cat-in-loop"]

finding contains f if {
	some c in input.calls
	c.name in {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"}
	c.loop >= 0
	not decoding(c)
	why := reason(c)
	f := {
		"msg": sprintf("%s %s", [c.name, why]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

# decoding holds for x = torch.cat([x, y]) in a loop that is not a step
# loop but calls a model: autoregressive generation, where the sequence
# must grow and the forward pass dominates.
decoding(c) if {
	c.accumulates
	l := input.loops[c.loop]
	not l.step
	l.calls_model
}

reason(c) := "re-copies the accumulated tensor at every loop iteration; append to a list and concatenate once" if c.accumulates

else := "runs in a loop inside the step loop: one small copy kernel per inner iteration; concatenate once" if c.inner_loop
