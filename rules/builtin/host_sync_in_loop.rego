# METADATA
# title: Host waits for the GPU inside the step loop
# description: |
#   **Why it matters.** CUDA work is queued asynchronously. `.item()`,
#   `.cpu()`, `.tolist()`, `.to("cpu")`, `print(tensor)`, `float(tensor)` /
#   `int(tensor)` / `bool(tensor)`, a tensor in an `if` or `while` condition
#   (`if loss > 0:`), `.nonzero()` (its output shape depends on the data),
#   `torch.cuda.empty_cache()` and `torch.cuda.synchronize()` make the host
#   wait until the GPU has finished everything queued, so the GPU then idles
#   while Python launches the next kernels. Once per step, this drains the
#   pipeline every step.
#
#   **Fix.** Accumulate on the GPU and read rarely:
#
#   ```python
#   running = torch.zeros((), device=device)
#   for step, (x, y) in enumerate(loader):
#       loss = criterion(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
#       loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
#       running += loss.detach()
#       if step % 100 == 0:
#           print(running.item() / 100)   # one sync per 100 steps
#           running.zero_()
#   ```
#
#   Call `torch.cuda.synchronize()` only around timing code.
#
#   **How to confirm.** What stepdoctor matches: One of these calls runs unconditionally in a
#   step loop (a loop over a DataLoader, or one that calls `.backward()` or
#   `optimizer.step()`); calls under an `if` (logging every N steps) are not
#   reported. `print(x)` counts when `x` was assigned from a call in the loop.
#   `float(x)`, `int(x)`, `bool(x)` and conditions count only when `x` is a
#   tensor by a stricter guess: assigned in the loop from a `torch.*` call, a
#   model, criterion or loss call, a tensor method or arithmetic on one, or a
#   batch drawn from the DataLoader (not `enumerate`'s index); `x is None`,
#   `len(x)` and plain Python numbers are not reported.
#   Calls inside functions called from the loop are not followed. In a trace the
#   syncs are `sync_per_step` / `sync_time_ratio`.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 5% of step time (`impact`), with confidence "likely". With `stepdoctor analyze --script` the finding becomes confirmed and takes the host time blocked in syncs (`sync_time_ratio`) when the trace shows at least one sync per step.
# custom:
#   id: host-sync-in-loop
#   severity: medium
#   category: script
#   requires: [calls]
#   confidence: likely
#   params:
#     impact: 0.05
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization
#     - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
package stepdoctor.rules.host_sync_in_loop

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["host-sync-in-loop"]

finding contains f if {
	some c in input.calls
	c.step_loop >= 0
	not c.conditional
	label := sync_label(c)
	f := {
		"msg": sprintf("%s runs every step (step loop at line %d): the host blocks until the GPU queue drains", [label, input.loops[c.step_loop].line]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

sync_label(c) := sprintf("%s()", [c.name]) if c.name in {".item", ".cpu", ".tolist"}

sync_label(c) := ".numpy()" if {
	c.name == ".numpy"
	c.receiver_call != ".cpu"
}

sync_label(c) := "torch.cuda.synchronize()" if c.name == "torch.cuda.synchronize"

sync_label(c) := "torch.cuda.empty_cache()" if c.name == "torch.cuda.empty_cache"

sync_label(c) := sprintf("%s() (its output shape depends on the data)", [c.name]) if c.name in {".nonzero", "torch.nonzero", "torch.argwhere", ".argwhere"}

sync_label(c) := sprintf("%s(%s)", [c.name, c.tensors[0]]) if {
	c.name in {"float", "int", "bool"}
	count(c.args) == 1
	count(c.tensors) == 1
}

finding contains f if {
	some k in input.conditions
	k.step_loop >= 0
	not k.conditional
	count(k.tensors) > 0
	f := {
		"msg": sprintf("`%s %s:` turns tensor %s into a Python bool every step (step loop at line %d): the host blocks until the GPU queue drains", [k.kind, k.text, concat(", ", k.tensors), input.loops[k.step_loop].line]),
		"impact": params.impact,
		"location": slib.loc(k),
	}
}

sync_label(c) := sprintf("print(%s)", [concat(", ", c.tensor_args)]) if {
	c.name == "print"
	count(c.tensor_args) > 0
}

sync_label(c) := sprintf("%s(\"cpu\")", [c.name]) if {
	c.name == ".to"
	count(c.args) > 0
	slib.literal(c.args[0], "cpu")
}
