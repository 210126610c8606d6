# METADATA
# title: Optimizer built without the fused implementation
# description: |
#   **Why it matters.** The default optimizer step on CUDA is the `foreach`
#   implementation (a few multi-tensor kernels per parameter group); `fused=True`
#   does the whole update of Adam, AdamW and SGD in fused kernels, with fewer
#   launches and less memory traffic. `foreach=False` falls back to a Python loop
#   over parameters: several kernels per parameter per step.
#
#   **Fix.**
#
#   ```python
#   optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: In a CUDA script (or one that picks its device
#   through `torch.accelerator`; an accelerate `Accelerator(mixed_precision="fp16")`
#   counts, and the message then says that PyTorch before 2.4 rejects
#   `fused=True` for parameters still on the CPU, before `prepare()`), `torch.optim.Adam`, `AdamW` or
#   `SGD` built with neither `fused=True` nor `foreach=True` (or with
#   `foreach=False`), nor `fused=` set from a variable or an expression
#   (nanoGPT's `fused=device_type == "cuda"` picks it per device); not reported when `**kwargs` are passed, nor for a small
#   model, where the update is a few kernels whatever the implementation: the
#   optimizer's `<model>.parameters()` come from at most 8 `nn.Linear` layers of
#   known sizes up to 1024 plus parameter-free layers (activations, dropout,
#   `Sequential`), built directly, by a function of the script that returns
#   an `nn.Linear` (`layer(obs_dim, 64)`, sizes read from the call), or in a
#   Module class of the script or of a module of its directory that it
#   imports.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: optimizer-not-fused
#   severity: low
#   category: script
#   requires: [optimizers, features]
#   confidence: likely
#   params:
#     impact: 0.01
#   references:
#     - https://pytorch.org/docs/stable/optim.html#algorithms
#     - https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html
#   trace:
#     same_cause: [optimizer-foreach]
package stepdoctor.rules.optimizer_not_fused

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["optimizer-not-fused"]

finding contains f if {
	slib.device_script(input.features)
	some o in input.optimizers
	o.name in {"torch.optim.Adam", "torch.optim.AdamW", "torch.optim.SGD"}
	not o.kwargs_splat
	o.small_model == ""
	not slib.literal(o.fused, true)
	not slib.literal(o.foreach, true)
	not chosen(o.fused)
	f := {
		"msg": sprintf("%s is built %s; pass fused=True for a fused %s update%s", [o.name, how(o), slib.device_word(input.features), accelerate_note]),
		"impact": params.impact,
		"location": slib.loc(o),
	}
}

# accelerate_note: an accelerate script usually builds its optimizer
# before accelerator.prepare() moves the model, and PyTorch before 2.4
# (no fused CPU kernels) rejects fused=True for CPU parameters when the
# optimizer is built.
accelerate_note := " (with accelerate the parameters are still on the CPU before prepare(): PyTorch before 2.4 rejects fused=True there, so build the optimizer after prepare() on those versions)" if {
	some u in input.features.frameworks
	startswith(u.name, "accelerate.")
} else := ""

how(o) := "with foreach=False (a Python loop over parameters)" if slib.literal(o.foreach, false)

else := "without fused=True"

# chosen holds for fused= given as an expression (nanoGPT's
# fused=device_type == "cuda"): the script picks it per device.
chosen(v) if v.kind in {"name", "expr"}
