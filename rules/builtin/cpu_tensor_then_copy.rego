# METADATA
# title: Tensor created on the CPU, then copied to the GPU, inside a loop
# description: |
#   **Why it matters.** `torch.zeros(n).to(device)` allocates and fills a CPU
#   tensor, then copies it to the GPU: a host allocation, a synchronous pageable
#   copy and an extra kernel where one kernel on the device would do. Inside a
#   loop this repeats every iteration.
#
#   **Fix.** Create the tensor on the device (or once, outside the loop):
#
#   ```python
#   weights = torch.ones(10, device=device)
#   idx = torch.arange(n, device=device)
#   ```
#
#   **How to confirm.** What stepdoctor matches: `.to(<device>)`, `.cuda()` or
#   `.type_as(x)` (which takes x's device) called on
#   `torch.tensor/as_tensor/from_numpy/zeros/ones/empty/full/arange/rand/randn/
#   randint/linspace/eye/randperm(...)` without `device=`, directly or on the
#   name an earlier statement of the block last assigned it to (`z =
#   torch.randn(n, d)` then `z = z.type_as(imgs)`), but not
#   `torch.tensor/as_tensor/from_numpy(x)` of host data the innermost loop
#   binds anew every pass (the loop target, or `obs, reward, ... =
#   env.step(action)` in its body: it crosses the bus every pass however
#   it is built; a list of Python numbers, `torch.tensor([n])`, is still
#   reported), inside any loop but the
#   autoregressive decoding loop of a script that trains, outside its step
#   loops (a loop that calls the model and grows a sequence with torch.cat:
#   a demo sample, off the training step), and outside any step loop in a
#   loop whose body is known to run at most `few_passes` times in all
#   (`for epoch in range(2):` around the step loop, loops[].runs; the bound
#   dataloader-persistent-workers uses for a restart or two): two or three
#   copies in the whole run.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely". With `stepdoctor analyze --script` the finding becomes confirmed and takes the copy share of step time (`memcpy_time_ratio`) when the trace shows pageable host-to-device copies.
# custom:
#   id: cpu-tensor-then-copy
#   severity: low
#   category: script
#   requires: [calls]
#   confidence: likely
#   params:
#     impact: 0.01
#     few_passes: 3
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device
#     - https://pytorch.org/docs/stable/tensor_attributes.html#torch-device
#   trace:
#     same_cause: [pageable-memcpy, frequent-memcpy]
#     stack_site: memcpy
#     confirms:
#       rule: pageable-memcpy
#       fact: memcpy_pageable_htod_count
#       at_least: min_pageable
#       impact: memcpy_time_ratio
#       shows: "{memcpy_pageable_htod_count} pageable host-to-device copies"
#       shows_impact: "; copies take {memcpy_time_ratio} of step time"
package stepdoctor.rules.cpu_tensor_then_copy

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["cpu-tensor-then-copy"]

finding contains f if {
	slib.uses_gpu(input.features)
	some c in input.calls
	c.loop >= 0
	moves(c)
	fresh(c)
	not decoding(c)
	not varying_host_data(c)
	not few(c)
	f := {
		"msg": sprintf("%s builds the tensor on the CPU and copies it to the GPU in a loop; %s", [c.text, remedy(c)]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

# remedy: a tensor made from host data (torch.tensor(x), from_numpy)
# still crosses the bus with device=, so the gain is building it once
# when its values do not change (class weights, a constant mask); one a
# factory fills (zeros, arange, randn) is made on the device with none.
remedy(c) := "build it once, before the loop, when its values do not change (torch.tensor(..., device=) still copies host data)" if {
	host_data(c)
} else := "create it with device="

host_data(c) if {
	some name in {c.receiver_call, c.receiver_assigned}
	name in {"torch.tensor", "torch.as_tensor", "torch.from_numpy"}
}

# few(c) holds for a call outside the step loops in a loop whose body is
# known to run at most few_passes times in all (range() bounds known for
# it and the loops around it, loops[].runs): a per-epoch tensor in a
# two-epoch run is two copies of a few microseconds each.
few(c) if {
	c.step_loop < 0
	r := input.loops[c.loop].runs
	r > 0
	r <= params.few_passes
}

# varying_host_data(c) holds for a tensor made from host data the loop
# binds anew every pass (obs, reward = env.step(action) before
# torch.tensor(reward).to(device)): it must cross the bus every pass, and
# device= would copy it all the same, so there is nothing to move out of
# the loop. A factory that fills (zeros, arange, randn) is still made on
# the device instead, whatever its sizes.
varying_host_data(c) if {
	host_data(c)
	c.receiver_varies
}

# decoding(c) holds for a call in an autoregressive decoding loop of a
# script that trains, outside any step loop (a loop that calls the model
# and grows a sequence, x = torch.cat([x, y]), as cat-in-loop reads it): a
# demo translation or sample, off the training step. Decoding inside the
# step (seq2seq training) is the step's own work.
decoding(c) if {
	c.step_loop < 0
	l := input.loops[c.loop]
	not l.step
	l.calls_model
	some d in input.calls
	d.loop == c.loop
	d.accumulates
	slib.trains(input.loops)
}

# fresh(c) holds for a method called on a tensor just made on the CPU: a
# factory call without device=, chained, or last assigned to the receiver's
# name earlier in the block (z = torch.randn(n, d); z = z.type_as(x)).
fresh(c) if {
	c.receiver_call in slib.factories
	not "device" in c.receiver_keywords
}

fresh(c) if c.receiver_assigned in slib.factories

# moves(c) holds for a move to the GPU: .cuda(), .to(device), or
# .type_as(x), which takes x's device (a GPU batch in a training step).
moves(c) if slib.to_device(c)

moves(c) if {
	c.name == ".type_as"
	count(c.args) == 1
}

