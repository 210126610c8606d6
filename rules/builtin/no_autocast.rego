# METADATA
# title: Training loop without mixed precision
# description: |
#   **Why it matters.** On GPUs with Tensor Cores (Volta and later),
#   matmuls and convolutions in float16 / bfloat16 run several times faster than
#   in float32 and move half the bytes. `torch.autocast` picks the precision per
#   op and keeps numerically sensitive ops in float32.
#
#   **Fix.**
#
#   ```python variant=default
#   for x, y in loader:
#       with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
#           loss = criterion(model(x), y)
#       loss.backward()              # float16 instead: add torch.amp.GradScaler("cuda")
#       optimizer.step(); optimizer.zero_grad()
#   # or, keeping float32 storage: TF32 tensor cores for matmuls (Ampere and newer)
#   torch.set_float32_matmul_precision("high")
#   ```
#
#   A script that picks its device through `torch.accelerator` names that
#   device's type:
#
#   ```python variant=accelerator
#   device = torch.accelerator.current_accelerator()
#   for x, y in loader:
#       with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
#           loss = criterion(model(x), y)
#       loss.backward()              # float16 instead: add torch.amp.GradScaler(device.type)
#       optimizer.step(); optimizer.zero_grad()
#   ```
#
#   A script that trains through Lightning Fabric sets it on Fabric, which
#   then runs the forward under autocast and scales float16 losses in
#   `fabric.backward`:
#
#   ```python variant=fabric
#   fabric = Fabric(precision="bf16-mixed")   # "16-mixed" on GPUs without bfloat16 (V100, T4)
#   model, optimizer = fabric.setup(model, optimizer)
#   ```
#
#   A LightningModule trained by a `Trainer` the script builds sets it on the
#   Trainer, which runs `training_step` under autocast:
#
#   ```python variant=trainer
#   trainer = L.Trainer(precision="bf16-mixed")   # "16-mixed" on GPUs without bfloat16 (V100, T4)
#   ```
#
#   bfloat16 keeps float32's range; with float16, sums over many elements
#   (a Gram matrix, a large reduction) can overflow in the forward pass,
#   which GradScaler does not prevent: keep such ops in float32.
#
#   **How to confirm.** What stepdoctor matches: A CUDA script (or one that picks its device
#   through `torch.accelerator`) with a loop that calls
#   `.backward()` or `optimizer.step()` and no `torch.autocast` /
#   `torch.amp.autocast` / `torch.cuda.amp.autocast` anywhere; reported once, at
#   the first training loop. Not reported when mixed precision comes from
#   elsewhere: `Accelerator(mixed_precision=...)`, Lightning `Fabric(precision=...)`
#   or `Trainer(precision=...)` (not "32" / "64"; a script that trains
#   through a `Fabric` built without a 16-bit `precision=` gets the finding
#   at that call, as one that picks no device itself), or a model cast with
#   `.half()`, `.bfloat16()` or `.to(dtype=torch.bfloat16)`, an FSDP
#   `MixedPrecision` / FSDP2 `MixedPrecisionPolicy` with a 16-bit
#   `param_dtype`, or autocast or any of these in a module of the script's
#   directory that it imports from; nor when every
#   optimizer updates a model known to be small (a few narrow `nn.Linear`
#   layers, as `optimizer-not-fused` tells them). When the script
#   uses `nn.BCELoss` or `F.binary_cross_entropy`, the message says to switch
#   to `nn.BCEWithLogitsLoss` on logits first: both raise under CUDA autocast.
#
#   A LightningModule's `training_step` is reported at the `Trainer(...)`
#   the script builds when that call has no `precision=` and no `**kwargs`
#   (Lightning's default is "32-true"); a Trainer built by `LightningCLI`
#   takes its precision from the command line or a config, and is left.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 5% of step time (`impact`), with confidence "likely".
# custom:
#   id: no-autocast
#   severity: low
#   category: script
#   requires: [loops, features, optimizers]
#   confidence: likely
#   params:
#     impact: 0.05
#   references:
#     - https://pytorch.org/docs/stable/amp.html
#     - https://pytorch.org/tutorials/recipes/recipes/amp_recipe.html
#   trace:
#     same_cause: [amp-not-used]
package stepdoctor.rules.no_autocast

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["no-autocast"]

finding contains f if {
	slib.device_script(input.features)
	count(input.features.autocast) == 0
	count(input.features.mixed_precision) == 0
	not small_models_only
	some i, l in input.loops
	training(l)
	not earlier_training_loop(i)
	f := {
		"msg": concat("", ["the training loop runs in float32: no torch.autocast in this ", slib.device_word(input.features), " script", bce_note]),
		"impact": params.impact,
		"fix": fix,
		# a step function's training runs in the step loop that calls it
		"location": slib.loc(input.loops[l.root]),
	}
}

fix := "default" if count(input.features.cuda) > 0
else := "accelerator"

# A Lightning Fabric places the model on the GPU it picks (accelerator
# "auto" by default) and trains in float32 unless given a 16-bit
# precision=: a script that trains through one without it gets the
# finding at the Fabric call, with Fabric's own switch as the fix.
finding contains f if {
	not slib.device_script(input.features)
	count(input.features.cpu_only) == 0
	count(input.features.autocast) == 0
	count(input.features.mixed_precision) == 0
	not small_models_only
	fabrics := [u | some u in input.features.frameworks; endswith(u.name, ".Fabric")]
	count(fabrics) > 0
	some l in input.loops
	training(l)
	f := {
		"msg": concat("", ["the training loop runs in float32: Fabric is built without a 16-bit precision= (its default is \"32-true\") and nothing else sets autocast", bce_note]),
		"impact": params.impact,
		"fix": "fabric",
		"location": slib.loc(fabrics[0]),
	}
}

# A LightningModule trained by a Trainer the script builds itself, with
# no precision= and no **kwargs (a LightningCLI config or a dict of
# settings may set one): Lightning's default precision is "32-true". The
# finding is at the Trainer call, with the Trainer's switch as the fix.
finding contains f if {
	count(input.features.cpu_only) == 0
	count(input.features.autocast) == 0
	count(input.features.mixed_precision) == 0
	not small_models_only
	some l in input.loops
	lightning_hook(l)
	l.trains
	trainers := [c |
		some c in input.calls
		slib.lightning_trainer(c.name)
		not c.kwargs_splat
		not c.keywords.precision
	]
	count(trainers) > 0
	f := {
		"msg": concat("", ["the training_step runs in float32: the Trainer is built without a 16-bit precision= (its default is \"32-true\") and nothing else sets autocast", bce_note]),
		"impact": params.impact,
		"fix": "trainer",
		"location": slib.loc(trainers[0]),
	}
}

# training holds for a loop (or a step function it calls) that trains. A
# LightningModule's training_step is left out: the Trainer's precision
# (often set from a LightningCLI config) decides autocast there.
training(l) if {
	l.trains
	not lightning_hook(l)
}

lightning_hook(l) if {
	l.kind == "function"
	l.parent < 0
}

earlier_training_loop(i) if {
	some j, l in input.loops
	j < i
	training(l)
}

# bce_note warns that the script's binary cross-entropy on probabilities
# (nn.BCELoss, F.binary_cross_entropy) raises under CUDA autocast
# ("unsafe to autocast"): it must become BCEWithLogitsLoss on logits first.
bce_note := sprintf("; first replace %s at line %d with nn.BCEWithLogitsLoss on logits (drop the final Sigmoid): binary cross-entropy on probabilities raises under autocast", [c.name, c.line]) if {
	bce := [c | some c in input.calls; bce_call(c)]
	c := bce[0]
} else := ""

bce_call(c) if c.name in {"torch.nn.BCELoss", "torch.nn.functional.binary_cross_entropy"}

# small_models_only holds when every optimizer of the script updates a
# model known to be small (optimizers[].small_model: a few narrow
# nn.Linear layers): such a model gives tensor cores nothing to do, and
# its step is launch-bound, so autocast adds casts without a gain.
small_models_only if {
	count(input.optimizers) > 0
	every o in input.optimizers {
		o.small_model != ""
	}
}
