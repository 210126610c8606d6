# METADATA
# title: Every step's loss tensor kept in a list
# description: |
#   **Why it matters.** `losses.append(loss)` keeps the tensor itself, on the
#   GPU and with its `grad_fn`, for every step of the run: the list holds a
#   device allocation and an autograd node per step, and memory grows for as
#   long as the run does. Reading them later (`[l.item() for l in losses]`,
#   `torch.stack(losses).mean()`) is one host sync per element. The PyTorch
#   FAQ calls this accumulating history across the training loop.
#
#   **Fix.**
#
#   ```python
#   running = torch.zeros((), device=device)
#   for step, (x, y) in enumerate(loader):
#       loss = criterion(model(x), y)
#       loss.backward(); opt.step(); opt.zero_grad()
#       running += loss.detach()            # stays on the GPU, no graph
#       if step % 100 == 0:
#           losses.append(running.item() / 100)   # one sync per 100 steps
#           running.zero_()
#   ```
#
#   `losses.append(loss.detach())` keeps the values without the graph, and
#   `loss.item()` gives Python numbers at one sync each step.
#
#   **How to confirm.** What stepdoctor matches: in a step loop, `.append(x)`
#   where `x` is the name whose `.backward()` the same step calls (the loss
#   itself, not `loss.item()` or `loss.detach()`); reported at the append. In
#   a trace, `torch.profiler` with `profile_memory=True` shows the allocated
#   memory climbing step after step.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: loss-kept-across-steps
#   severity: low
#   category: script
#   requires: [calls]
#   confidence: likely
#   params:
#     impact: 0.01
#   references:
#     - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
#   trace:
#     same_cause: [memory-growth]
package stepdoctor.rules.loss_kept_across_steps

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["loss-kept-across-steps"]

finding contains f if {
	slib.uses_gpu(input.features)
	some c in input.calls
	c.name == ".append"
	c.step_loop >= 0
	count(c.args) == 1
	c.args[0].kind == "name"
	[c.step_root, c.args[0].text] in backward_of
	f := {
		"msg": sprintf("%s.append(%s) keeps every step's loss tensor, with its autograd node, on the GPU for the whole run: memory grows each step, and reading them back is one host sync each; append %s.detach(), or accumulate on the GPU and append .item() every N steps", [c.receiver, c.args[0].text, c.args[0].text]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

# backward_of holds [step root, name] for each name whose .backward() a
# step calls.
backward_of contains [b.step_root, b.receiver] if {
	some b in input.calls
	b.name == ".backward"
	b.step_root >= 0
}
