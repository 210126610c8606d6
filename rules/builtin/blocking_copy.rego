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
#   (`device`, a name containing "device" or "cuda", a DDP rank name
#   (`local_rank`, `gpu`), a name only ever assigned a non-CPU
#   `torch.device(...)` or a `"cuda..."` string (`dev = torch.device("cuda")`,
#   `dev = "cuda" if torch.cuda.is_available() else "cpu"`), `"cuda..."`,
#   `torch.device(...)`), in a step loop without `non_blocking=True`, once per
#   loop (the other copies of the loop are named in the message). Copies of
#   freshly created CPU tensors are reported by `cpu-tensor-then-copy` instead.
#   Not reported: in a script that never uses a GPU (no `.cuda()`, `torch.cuda.*`, `torch.accelerator.*`,
#   `"cuda"` device, the nccl backend, a sibling module importing it that uses a GPU, DDP / FSDP, accelerate or Lightning); Module moves (`model.to(device)`,
#   a name assigned from an `nn.Module` constructor or a `.train()` / `.eval()`
#   chain); `batch.to(accelerator.device)` when the script `prepare()`s its
#   loaders (they already place batches); a move of a tensor already on the
#   device (its name last assigned, before the loop or in it, from a device
#   move or a factory given a non-CPU `device=`: `X = X.to(device)`, then
#   `X[idx].to(device)` copies nothing); and in a loop that syncs every step
#   (`host-sync-in-loop` names the copies there: `non_blocking` gains nothing
#   while the host waits every step anyway).
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
#   trace:
#     same_cause: [pageable-memcpy]
#     stack_site: memcpy
#     confirms:
#       rule: pageable-memcpy
#       fact: memcpy_pageable_htod_count
#       at_least: min_pageable
#       impact: memcpy_time_ratio
#       shows: "{memcpy_pageable_htod_count} pageable host-to-device copies"
#       shows_impact: "; copies take {memcpy_time_ratio} of step time"
package stepdoctor.rules.blocking_copy

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["blocking-copy"]

finding contains f if {
	slib.uses_gpu(input.features)
	copies := {x |
		some c in input.calls
		c.step_loop >= 0
		slib.blocking_copy(c)
		not fallback(c)
		x := {"loop": c.step_root, "site": c.step_loop, "line": c.line, "column": c.column, "text": c.text, "receiver": c.receiver, "location": slib.loc(c)}
	}
	synced := {s.loop | some s in slib.step_syncs(input.calls, input.conditions)}
	some group in slib.loop_groups(copies)
	x := group[0]
	not x.loop in synced
	not slib.eval_in_training(input.loops[x.loop].eval, input.loops)
	others := sort([y.line | some y in array.slice(group, 1, count(group))])
	f := {
		"msg": sprintf("%s copies to the GPU synchronously every step (%s)%s; %s", [x.text, slib.step_where(input.loops, x.site), also(others, x.line), remedy(x)]),
		"impact": params.impact,
		"location": x.location,
	}
}

# fallback holds for a blocking copy of a tensor that the same step also
# copies with non_blocking=True: the other branch of an
# `if device_type == "cuda":` (nanoGPT's get_batch pins and copies
# asynchronously on CUDA and falls back to x.to(device) elsewhere).
fallback(c) if [c.step_root, base(c.receiver)] in async_copied

# async_copied holds [step root loop, receiver base] for each copy made
# with non_blocking=True, found once for all copies.
async_copied contains [d.step_root, base(d.receiver)] if {
	some d in input.calls
	d.name in {".to", ".cuda"}
	slib.literal(slib.keyword(d, "non_blocking"), true)
}

# base is the leading name of a receiver: x of x.pin_memory().
base(r) := regex.find_n(`^[A-Za-z_][A-Za-z0-9_]*`, r, 1)[0]

also(others, line) := "" if count(others) == 0

# all on the copy's own line: say so (x.to(d), y.to(d) on one line)
else := sprintf(", as does the other copy on line %d", [line]) if {
	count(others) == 1
	others[0] == line
}

else := sprintf(", as do the %d other copies on line %d", [count(others), line]) if {
	every l in others {
		l == line
	}
}

else := sprintf(", as does the copy at line %d", [others[0]]) if count(others) == 1

else := sprintf(", as do the copies at %s", [slib.lines_text(sort({l | some l in others}))])

# remedy: a slice of a host tensor taken in a loop that is not over a
# DataLoader (a replay buffer, a rollout indexed by a BatchSampler) is
# copied again at every step and epoch: the tensor is better moved once,
# before the loop, and indexed on the GPU. The index is a name or an
# expression: a literal key or position (batch["input_ids"], batch[0]) picks
# a field of a batch, which a DataLoader (next(it) included) yields; those
# batches are copied asynchronously from pinned memory.
remedy(x) := "the loop indexes a host tensor: move it to the GPU once, before the loop, and index it there (or pin it and pass non_blocking=True)" if {
	m := regex.find_all_string_submatch_n(`^[A-Za-z_][A-Za-z0-9_.]*\[([^\]]+)\]$`, x.receiver, 1)
	count(m) == 1
	not regex.match(`^\s*(['"]|-?[0-9]+\s*$)`, m[0][1])
	l := input.loops[x.site]
	l.kind in {"for", "while"}
	not l.over_loader
} else := "pass non_blocking=True (with a pinned DataLoader)"
