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
#   reported. In an evaluation loop (a loop that does not train, under
#   `torch.no_grad()` or `torch.inference_mode()`, around its forward or
#   the whole loop, in a function decorated with either or named like
#   `validate` / `evaluate` / `test`, or over an evaluation DataLoader such
#   as `val_loader`) of a script that also trains, nothing is reported: it
#   slows evaluation, not the training step. In a script that only
#   evaluates, the finding says "every evaluation batch" and is low, with a
#   1% prior (`eval_impact`). `print(x)` counts when `x` was assigned from a call in the loop.
#   `float(x)`, `int(x)`, `bool(x)` and conditions count only when `x` is a
#   tensor by a stricter guess: assigned in the loop from a `torch.*` call, a
#   model, criterion or loss call, a tensor method or arithmetic on one, or a
#   batch drawn from the DataLoader (not `enumerate`'s index); `x is None`,
#   `len(x)` and plain Python numbers are not reported, nor values already on
#   the host: results of `.item()`, `.tolist()`, `.numpy()` and `.cpu()`, and
#   `range` loop indices. One finding per step loop, at its first sync; the
#   others, and the blocking copies that gain nothing while the loop syncs, are
#   named in the message; an ignore comment on that first sync silences the loop's finding.
#   Scripts that never use a GPU (no `.cuda()`,
#   `torch.cuda.*`, `torch.accelerator.*`, `"cuda"` device, the nccl backend, a sibling module importing it that uses a GPU, DDP / FSDP, accelerate
#   or Lightning) are not reported.
#   A sync under the `if` that holds the optimizer's `.step()` behind a
#   remainder test (gradient accumulation, `if (i + 1) % k == 0:`) is not
#   logging: it runs on every optimizer step and is reported as such.
#   Outside step loops, `torch.cuda.empty_cache()` is reported in a loop
#   that runs the model itself (`model(x)`, `self.net(x)`, `pipe(prompt)`,
#   `.generate(...)`: a serving or generation loop; not an epoch loop that
#   holds a step loop, nor one that only calls `model.eval()`, nor a loop
#   over checkpoints or models that loads weights on each pass with
#   `torch.load`, `load_state_dict` or `from_pretrained`) when it runs on every pass, not under an `if`, an
#   `except` or a `lambda`: each pass hands the cached blocks back to the
#   driver and the next one allocates them again.
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
#     eval_impact: 0.01
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization
#     - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
#   trace:
#     same_cause: [host-sync-in-step, idle-gap-sync]
#     stack_site: sync
#     confirms:
#       rule: host-sync-in-step
#       fact: sync_per_step
#       at_least: min_per_step
#       impact: sync_time_ratio
#       shows: "{sync_per_step} host syncs per step"
#       shows_impact: " blocking the host {sync_time_ratio} of step time"
package stepdoctor.rules.host_sync_in_loop

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["host-sync-in-loop"]

finding contains f if {
	slib.uses_gpu(input.features)
	some group in slib.loop_groups(slib.step_syncs(input.calls, input.conditions) | gate_syncs)
	x := group[0]
	not slib.eval_in_training(input.loops[x.loop].eval, input.loops)
	others := sort({y.line | some y in array.slice(group, 1, count(group))})
	copies := object.get(blocking_copies, x.loop, [])
	f := object.union(
		{
			"msg": sprintf("%s %s (%s): the host blocks until the GPU queue drains%s%s%s", [x.label, how_often(x), slib.step_where(input.loops, x.site), also(others), copies_note(copies), eval_note(x)]),
			"impact": params.impact,
			"location": x.location,
		},
		eval_grade(x),
	)
}

# A serving or generation loop (not a step loop, and not inside one) that
# calls the model and empties the CUDA cache on every pass: each pass
# returns the caching allocator's free blocks to the driver, and the next
# one cudaMallocs them again, synchronizing both times.
finding contains f if {
	slib.uses_gpu(input.features)
	some c in input.calls
	c.name == "torch.cuda.empty_cache"
	c.step_loop < 0
	c.loop >= 0
	l := input.loops[c.loop]
	not l.step
	not c.branch
	runs_model(c.loop)
	not holds_step_loop(c.loop)
	not loads_weights(c.loop)
	f := {
		"msg": sprintf("torch.cuda.empty_cache() runs on every pass of the loop at line %d, which calls the model: it hands the caching allocator's free blocks back to the driver, so the next pass cudaMallocs them again and both synchronize; remove it (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True if fragmentation is the worry)", [l.line]),
		"impact": params.impact,
		"location": slib.loc(c),
	}
}

# runs_model(i) holds when loop i itself (not a loop inside it) calls a
# model: model(x), self.net(x), pipe(prompt) or .generate(...). Its
# .train(), .eval() or .load_state_dict() do not run it.
runs_model(i) if {
	some d in input.calls
	d.loop == i
	model_call(d)
}

model_call(d) if d.name == ".generate"

model_call(d) if regex.match(`^\.?([A-Za-z0-9]+_)*(model|net|generator|decoder|encoder|llm|pipe|pipeline)$`, d.name)

# loads_weights(i) holds for a loop that loads weights on each pass (a
# loop over checkpoints or models): the working set changes from pass to
# pass, and emptying the cache between them is the point.
loads_weights(i) if {
	some d in input.calls
	d.loop == i
	d.name in {"torch.load", ".load_state_dict", ".from_pretrained", "torch.hub.load", "safetensors.torch.load_file"}
}

# holds_step_loop(i) holds for an epoch loop: a step loop runs inside
# loop i, and emptying the cache once per epoch costs nothing.
holds_step_loop(i) if {
	some l in input.loops
	l.parent == i
	l.step
}

# gate_syncs are the syncs under the if that holds the optimizer's step
# behind a remainder test (gradient accumulation: if (i + 1) % k == 0:
# opt.step(); torch.cuda.empty_cache()): they run on every optimizer step,
# not every N steps as logging does.
gate_syncs := {s |
	some c in input.calls
	c.step_loop >= 0
	c.conditional
	not c.inner_loop
	c.guard >= 0
	k := input.conditions[c.guard]
	slib.remainder(k)
	some d in input.calls
	slib.optimizer_step(d)
	d.guard == c.guard
	label := sprintf("%s runs", [slib.sync_label(c)])
	s := {"loop": c.step_root, "site": c.step_loop, "line": c.line, "column": c.column, "label": label, "gate": k.line, "location": slib.loc(c)}
}

# blocking_copies is each step loop's blocking copies, {loop: sorted
# lines}, found once for all loops.
blocking_copies := {g[0].loop: sort({y.line | some y in g}) | some g in slib.loop_groups(copies)}

copies contains {"loop": c.step_root, "line": c.line, "column": c.column} if {
	some c in input.calls
	c.step_root >= 0
	slib.blocking_copy(c)
}

# An evaluation loop (loops[].eval: it does not train, and runs under
# torch.no_grad() or in a validate/test function or over an evaluation
# loader) is not the training step: its syncs slow evaluation only, so
# the finding says so and ranks low.
evaluation(x) if input.loops[x.loop].eval

how_often(x) := "every evaluation batch" if evaluation(x)
else := sprintf("on every optimizer step (under the gate at line %d)", [x.gate]) if x.gate
else := "every step"

eval_note(x) := "; this is an evaluation loop, so it slows evaluation" if evaluation(x)
else := ""

eval_grade(x) := {"impact": params.eval_impact, "severity": "low"} if evaluation(x)
else := {}

also(others) := "" if count(others) == 0

else := sprintf("; the loop also syncs at %s (one fix: keep values on the GPU and read them every N steps)", [slib.lines_text(others)])

copies_note(copies) := "" if count(copies) == 0

else := sprintf("; while the loop syncs, passing non_blocking=True to the copies at %s would gain nothing", [slib.lines_text(copies)])
