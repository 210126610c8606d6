# METADATA
# title: Evaluation or inference loop runs with autograd on
# description: |
#   **Why it matters.** `model.eval()` switches dropout and batch norm to
#   evaluation behaviour; it does not turn autograd off. Without
#   `torch.no_grad()` or `torch.inference_mode()`, every forward of an
#   evaluation or inference loop records the autograd graph and keeps each
#   layer's saved activations alive until its outputs are freed: host time per
#   operator for a backward that never comes, and activation memory that caps
#   the evaluation batch size. The PyTorch performance tuning guide lists
#   disabling gradient calculation for validation and inference among its
#   first recommendations; `inference_mode` also skips the version counters
#   and view tracking that `no_grad` keeps.
#
#   **Fix.**
#
#   ```python
#   @torch.inference_mode()          # or: with torch.inference_mode(): around the loop
#   def evaluate(model, loader):
#       model.eval()
#       for x, y in loader:
#           out = model(x.to(device, non_blocking=True))
#           ...
#   ```
#
#   Use `torch.no_grad()` instead where the outputs are later used in
#   autograd (inference tensors cannot be saved for backward).
#
#   **How to confirm.** What stepdoctor matches: a `for` or `while` loop that
#   draws batches from a DataLoader (or a name containing "loader"), does not
#   train (no `.backward()` or optimizer `.step()` in its body), and is an
#   evaluation loop: in a def named for evaluation (`evaluate`, `validate`,
#   `test`, `predict`, ...), over a validation or test loader, or after
#   `model.eval()`; whose body runs a model's forward (`model(x)`,
#   `self.net(x)`, `model.forward(x)`; not `model.generate()`, which Hugging
#   Face runs under `no_grad` itself) and reads no gradients (`.backward()`,
#   `.grad`, `requires_grad`, `torch.autograd.*`: saliency maps and
#   adversarial examples need autograd). Left out: a loop under `with
#   torch.no_grad()` / `torch.inference_mode()` /
#   `torch.set_grad_enabled(False)` (around the loop, around the forward in
#   its body, or as a decorator of its def; also under their
#   `torch.autograd` names, and a `with ctx:` where some assignment makes
#   `ctx` one, or a conditional with one as a branch); a script that imports
#   a library taking gradients through the model (captum, torchattacks,
#   foolbox, advertorch, autoattack, ART); a loop in a def that the script
#   never calls, or calls under such a block at least once (its caller may
#   turn autograd off); a script that turns autograd off for the whole
#   process (`torch.set_grad_enabled(False)` as a statement) or freezes
#   parameters (`.requires_grad_(False)`). Reported at the loop. In a trace,
#   the evaluation steps' operators show `autograd::engine` bookkeeping and
#   their memory stays high until the outputs are dropped.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 5% of step time (`impact`), with confidence "likely"; in a script that also trains, the loop slows evaluation rather than the training step, and the finding is low with `eval_impact` (1%).
# custom:
#   id: autograd-in-eval
#   severity: medium
#   category: script
#   requires: [loops, calls, functions]
#   confidence: likely
#   params:
#     impact: 0.05
#     eval_impact: 0.01
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-gradient-calculation-for-validation-or-inference
#     - https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html
#     - https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
package stepdoctor.rules.autograd_in_eval

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["autograd-in-eval"]

finding contains f if {
	some l in input.loops
	l.kind in {"for", "while"}
	l.step
	l.eval
	not l.no_grad
	l.forward
	not l.uses_grad
	not grad_off_everywhere
	not gradient_library
	not caller_may_turn_off(l)
	f := object.union(
		{
			"msg": sprintf("the evaluation loop at line %d%s runs the model with autograd on%s: every forward records the autograd graph and keeps its activations for a backward that never comes; wrap it in `with torch.inference_mode():`%s", [l.line, over(l), eval_note, decorate_note(l)]),
			"impact": params.impact,
			"location": slib.loc(l),
		},
		grade,
	)
}

# over(l) names what a for loop iterates (a while loop's condition is no
# iterable).
over(l) := sprintf(" (over %s)", [l.iter]) if l.kind == "for"

else := ""

# eval_note says that model.eval() does not turn autograd off, in a script
# that calls it.
eval_note := " (model.eval() alone does not turn it off)" if {
	some c in input.calls
	c.name == ".eval"
} else := ""

# gradient_library holds for a script that imports a library that takes
# gradients through the model in its evaluation loops: adversarial attacks
# (torchattacks, foolbox, advertorch, autoattack, ART) and attributions
# (captum). They need autograd on.
gradient_library if {
	some im in input.imports
	some lib in {"captum", "torchattacks", "foolbox", "advertorch", "autoattack", "art", "cleverhans"}
	split(im.name, ".")[0] == lib
}

# grad_off_everywhere holds for a script that turns autograd off for the
# process (torch.set_grad_enabled(False) as a statement, not a block) or
# freezes parameters (.requires_grad_(False)).
grad_off_everywhere if {
	some c in input.calls
	c.name in {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
	not c.no_grad
	grad_mode_false(c)
}

grad_mode_false(c) if {
	count(c.args) > 0
	slib.literal(c.args[0], false)
}

grad_mode_false(c) if slib.literal(c.keywords.mode, false)

grad_off_everywhere if {
	some c in input.calls
	c.name == ".requires_grad_"
	count(c.args) > 0
	slib.literal(c.args[0], false)
}

# caller_may_turn_off(l) holds for a loop in a def that the script never
# calls by name (another module or a framework may call it under no_grad)
# or calls under no_grad at least once.
caller_may_turn_off(l) if {
	fn := innermost_def(l)
	not called(fn)
}

caller_may_turn_off(l) if {
	fn := innermost_def(l)
	some c in input.calls
	c.name in slib.call_names(fn)
	c.no_grad
}

called(fn) if {
	some c in input.calls
	c.name in slib.call_names(fn)
}

# innermost_def(l) is the innermost def of the script around loop l
# (undefined at module level).
innermost_def(l) := fn if {
	defs := [g |
		some g in input.functions
		g.line > 0
		g.line <= l.line
		l.line <= g.end_line
	]
	count(defs) > 0
	fn := [g | some g in defs; every h in defs { h.line <= g.line }][0]
}

decorate_note(l) := sprintf(", or decorate %s() with @torch.inference_mode()", [innermost_def(l).name]) if innermost_def(l)

else := ""

# grade: in a script that also trains, the loop slows evaluation, not the
# training step.
grade := {"impact": params.eval_impact, "severity": "low"} if slib.trains(input.loops)

else := {}
