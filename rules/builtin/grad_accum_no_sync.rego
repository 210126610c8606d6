# METADATA
# title: Gradient accumulation all-reduces every micro-batch
# description: |
#   **Why it matters.** Under DistributedDataParallel (what `accelerator.prepare`
#   and Lightning Fabric's `setup` wrap the model in on several GPUs), every
#   `backward()` all-reduces the gradients across ranks. With gradient
#   accumulation only the micro-batch before `optimizer.step()` needs it: the
#   all-reduces of the other k-1 micro-batches move the whole gradient (4 bytes
#   a parameter in float32) and are overwritten. DDP's `no_sync()` (and the
#   framework wrappers around it) skips them; the PyTorch DDP and accelerate
#   docs describe the slowdown.
#
#   **Fix.** Let the framework skip the sync on the micro-batches that do
#   not step:
#
#   ```python variant=accelerate
#   accelerator = Accelerator(gradient_accumulation_steps=k)
#   for batch in train_dataloader:
#       with accelerator.accumulate(model):   # syncs only when the optimizer steps
#           loss = model(**batch).loss
#           accelerator.backward(loss)
#           optimizer.step(); lr_scheduler.step(); optimizer.zero_grad()
#   ```
#
#   ```python variant=fabric
#   for step, batch in enumerate(loader):
#       stepping = (step + 1) % k == 0
#       with fabric.no_backward_sync(model, enabled=not stepping):
#           fabric.backward(model(batch) / k)
#       if stepping:
#           optimizer.step(); optimizer.zero_grad()
#   ```
#
#   ```python variant=default
#   for step, (x, y) in enumerate(loader):
#       stepping = (step + 1) % k == 0
#       with contextlib.nullcontext() if stepping else ddp_model.no_sync():
#           (criterion(ddp_model(x), y) / k).backward()
#       if stepping:
#           optimizer.step(); optimizer.zero_grad()
#   ```
#
#   FSDP2 (`fully_shard`) turns the reduce-scatter off per module instead:
#
#   ```python variant=fsdp2
#   for step, (x, y) in enumerate(loader):
#       stepping = (step + 1) % k == 0
#       model.set_requires_gradient_sync(stepping)   # reduce-scatter only on the last micro-batch
#       (criterion(model(x), y) / k).backward()
#       if stepping:
#           optimizer.step(); optimizer.zero_grad()
#   ```
#
#   `(step + 1) % k` also keeps the first optimizer step from taking a single
#   micro-batch, which `step % k == 0` does.
#
#   **How to confirm.** What stepdoctor matches: a distributed script (it
#   builds DistributedDataParallel or FSDP, an accelerate `Accelerator` or a
#   Lightning `Fabric`) whose training loop calls `.backward()` on every
#   iteration and the optimizer's `.step()` only under an `if` whose test takes a
#   remainder (`if step % gradient_accumulation_steps == 0:`, the if or elif
#   whose branch holds the step; or a flag assigned from one, `update = (i
#   + 1) % k == 0; if update:`; or `if (i + 1) % k != 0: continue` before
#   an unconditional step), unless an optimizer also steps on every
#   iteration (a GAN's critic), and with no `no_sync`, `accumulate`, `no_backward_sync`,
#   `set_requires_gradient_sync` or `require_backward_grad_sync` anywhere in
#   the script, called or not. DeepSpeed engines (`model_engine.backward`,
#   an imported `deepspeed`, accelerate's `DeepSpeedPlugin`) accumulate by
#   themselves and are left out. On one GPU nothing is
#   all-reduced: the finding applies to multi-GPU launches (`accelerate
#   launch`, `torchrun`). In a trace of such a run each micro-batch's backward
#   shows its NCCL all-reduce kernels (`exposed-communication`).
#
#   **Impact estimate.** The script alone measures nothing, so the impact is
#   a prior: 5% of step time (`impact`), with confidence "likely".
# custom:
#   id: grad-accum-no-sync
#   severity: medium
#   category: script
#   requires: [calls, loops, conditions, features, imports]
#   confidence: likely
#   params:
#     impact: 0.05
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync
#     - https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation
#     - https://lightning.ai/docs/fabric/stable/advanced/gradient_accumulation.html
#   trace:
#     same_cause: [exposed-communication]
package stepdoctor.rules.grad_accum_no_sync

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["grad-accum-no-sync"]

# A switch that skips or disables the gradient sync, anywhere in the
# script, called or not (ctx = model.no_sync if ... else nullcontext;
# model.require_backward_grad_sync = ...).
sync_handled if count(input.features.grad_sync_switches) > 0

# DeepSpeed accumulates by itself: imported, or through accelerate's
# DeepSpeedPlugin.
sync_handled if {
	some i in input.imports
	startswith(i.name, "deepspeed")
}

sync_handled if {
	some c in input.calls
	endswith(c.name, "DeepSpeedPlugin")
}

distributed if count(input.features.ddp) > 0

distributed if {
	some u in input.features.frameworks
	framework_ddp(u.name)
}

framework_ddp(name) if name in {"accelerate.Accelerator", "accelerate.PartialState"}

framework_ddp(name) if endswith(name, ".Fabric")

# every_step(c) holds for a call that runs on every iteration of its step
# loop (not under an if, not in an inner loop).
every_step(c) if {
	c.step_loop >= 0
	not c.conditional
	not c.inner_loop
}

# micro_backward(b) holds for a backward on every iteration of its step
# loop, not a DeepSpeed engine's (which accumulates by itself).
micro_backward(b) if {
	b.name == ".backward"
	every_step(b)
	not contains(lower(b.receiver), "engine")
}

# gated is [backward, step, condition] for a step loop whose backward runs
# every iteration while the optimizer steps under a remainder test: the
# if (or elif) whose branch holds the step.
gated contains [b, s, k] if {
	some b in input.calls
	micro_backward(b)
	some s in input.calls
	slib.optimizer_step(s)
	s.step_loop == b.step_loop
	s.conditional
	s.line > b.line
	s.guard >= 0
	k := input.conditions[s.guard]
	slib.remainder(k)
	not stepped_every_time(b)
}

# The other way to write the gate: `if (i + 1) % k != 0: continue` after
# the backward, in the step loop's own body, and the step unconditional
# after it.
gated contains [b, s, k] if {
	some b in input.calls
	micro_backward(b)
	some s in input.calls
	slib.optimizer_step(s)
	every_step(s)
	s.step_loop == b.step_loop
	s.line > b.line
	some k in input.conditions
	k.step_loop == s.step_loop
	k.loop == s.step_loop
	not k.inner_loop
	k.kind == "if"
	k.skips
	not k.conditional
	b.line < k.line
	k.line < s.line
	slib.remainder(k)
}

# stepped_every_time(b) holds when an optimizer steps on every iteration
# after backward b (a GAN's critic steps every batch, its generator every
# n-th: no accumulation).
stepped_every_time(b) if {
	some s in input.calls
	slib.optimizer_step(s)
	every_step(s)
	s.step_loop == b.step_loop
	s.line >= b.line
}

fix := "fsdp2" if {
	some u in input.features.ddp
	endswith(u.name, "fully_shard")
} else := "accelerate" if {
	some u in input.features.frameworks
	startswith(u.name, "accelerate.")
} else := "fabric" if {
	some u in input.features.frameworks
	endswith(u.name, ".Fabric")
} else := "default"

finding contains f if {
	distributed
	not sync_handled
	some l in {b.step_loop | some [b, _, _] in gated}
	first := min({[b.line, b.column] | some [b, _, _] in gated; b.step_loop == l})
	some [b, _, _] in gated
	b.step_loop == l
	[b.line, b.column] == first
	# one finding for the backward: the first step it gates
	step := min({[s.line, s.column] | some [b2, s, _] in gated; b2 == b})
	some [b3, s, k] in gated
	b3 == b
	[s.line, s.column] == step
	f := {
		"msg": sprintf("%s all-reduces the gradients on every micro-batch, but %s runs only %s (line %d): on several GPUs, with more than one micro-batch a step, the all-reduces of those that do not step are wasted; skip them with %s", [
			b.text, s.text, gate_text(k), k.line, skip_with[fix],
		]),
		"impact": params.impact,
		"fix": fix,
		"location": slib.loc(b),
	}
}

gate_text(k) := sprintf("past `if %s: continue`", [k.text]) if k.skips
else := sprintf("under `if %s` (%s = %s)", [k.text, k.text, k.assigned]) if k.assigned != ""
else := sprintf("under `if %s`", [k.text])

skip_with := {
	"accelerate": "`with accelerator.accumulate(model):`, giving Accelerator the gradient_accumulation_steps",
	"fabric": "`with fabric.no_backward_sync(model, enabled=...)`",
	"default": "`with model.no_sync():` on the micro-batches that do not step",
	"fsdp2": "`model.set_requires_gradient_sync(False)` on the micro-batches that do not step (FSDP2 has no no_sync)",
}
