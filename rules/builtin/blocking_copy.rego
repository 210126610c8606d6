# METADATA
# title: Host-to-device copy without non_blocking=True in the step loop
# description: |
#   **Why it matters.** `x.to(device)` and `x.cuda()` copy synchronously: the
#   host waits for the copy before launching more work, so copy and compute never
#   overlap. From pinned memory (`DataLoader(pin_memory=True)`),
#   `non_blocking=True` makes the copy asynchronous on the current stream; the
#   kernels that use `x` are ordered after it, so results stay correct.
#
#   **Fix.**
#
#   ```python
#   for x, y in loader:                       # DataLoader(..., pin_memory=True)
#       x = x.to(device, non_blocking=True)
#       y = y.to(device, non_blocking=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `.cuda()` call, or `.to(...)` with a device
#   (`device`, a name containing "device" or "cuda", `"cuda..."`,
#   `torch.device(...)`), in a step loop without `non_blocking=True`. Copies of
#   freshly created CPU tensors are reported by `cpu-tensor-then-copy` instead.
#   In a trace these are `memcpy_pageable_htod_count` and `memcpy_time_ratio`.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 3% of step time (`impact`), with confidence "likely". With `stepdoctor analyze --script` the finding becomes confirmed and takes the copy share of step time (`memcpy_time_ratio`) when the trace shows pageable host-to-device copies.
# custom:
#   id: blocking-copy
#   severity: medium
#   category: script
#   requires: [calls]
#   confidence: likely
#   params:
#     impact: 0.03
#   references:
#     - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
#     - https://pytorch.org/docs/stable/generated/torch.Tensor.to.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-pinned-memory-and-non-blocking-data-transfers
package stepdoctor.rules.blocking_copy

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["blocking-copy"]

finding contains f if {
	some c in input.calls
	c.step_loop >= 0
	to_device(c)
	not c.receiver_call in factories
	not slib.literal(slib.keyword(c, "non_blocking"), true)
	f := {
		"msg": sprintf("%s copies to the GPU synchronously every step; pass non_blocking=True (with a pinned DataLoader)", [c.text]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

factories := {
	"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.zeros", "torch.ones",
	"torch.empty", "torch.full", "torch.arange", "torch.rand", "torch.randn", "torch.randint",
	"torch.linspace", "torch.eye", "torch.randperm",
}

# to_device holds for .cuda() and for .to(...) with a device argument.
to_device(c) if c.name == ".cuda"

to_device(c) if {
	c.name == ".to"
	c.keywords.device.present
}

to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "name"
	contains(lower(a.text), "device")
}

to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "name"
	contains(lower(a.text), "cuda")
}

to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "string"
	startswith(a.value, "cuda")
}

to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "expr"
	startswith(a.text, "torch.device(")
}

