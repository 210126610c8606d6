# Helpers for script rules (category script), available as
# data.stepdoctor.lib.script: `import data.stepdoctor.lib.script as slib`.
# They read only their arguments, so they type-check for any input.
package stepdoctor.lib.script

import rego.v1

# loc(x) is the finding location of a script fact x with a position
# (a call, loop, DataLoader, optimizer, profiler, use or value).
loc(x) := {"line": x.line, "column": x.column, "end_line": x.end_line, "end_column": x.end_column}

# literal(v, want) holds when argument value v is the literal want.
literal(v, want) if {
	v.present
	v.kind in {"bool", "int", "float", "string"}
	v.value == want
}

# defaults_to(v, want) holds when argument v reads a command-line option
# whose argparse default is the literal want (args.num_workers with
# default=0).
defaults_to(v, want) if {
	v.present
	v.kind == "name"
	v["default"] == want
}

# keyword(c, name) is call c's keyword argument name, or an absent value
# (so that `not slib.literal(slib.keyword(c, "x"), true)` holds when x
# was not passed; a missing key inside `not f(...)` would be undefined).
keyword(c, name) := object.get(c.keywords, name, {"present": false, "kind": "", "value": null, "text": ""})

# absent_or(v, want) holds when argument v was not passed or is the literal want.
absent_or(v, _) if not v.present

absent_or(v, want) if literal(v, want)

# uses_gpu(features) holds when the script uses a GPU: .cuda(), torch.cuda.*,
# a "cuda" device, torch.accelerator.*, DistributedDataParallel / FSDP, a
# framework (accelerate, Lightning) that picks the GPU itself, or a GPU hint
# (the nccl backend, a module of the same directory importing it that uses a
# GPU), and no framework is pinned to the CPU (Trainer(accelerator="cpu"),
# Accelerator(cpu=True)). Rules about host syncs and copies stay quiet in
# CPU-only scripts.
uses_gpu(features) if {
	gpu_signal(features)
	count(features.cpu_only) == 0
}

gpu_signal(features) if count(features.cuda) > 0

gpu_signal(features) if count(features.frameworks) > 0

gpu_signal(features) if count(features.accelerator) > 0

gpu_signal(features) if count(features.ddp) > 0

gpu_signal(features) if count(features.gpu_hints) > 0

# device_script(features) holds when the script itself puts its model or
# data on a GPU: .cuda(), torch.cuda.*, a "cuda" device, or the
# device-agnostic torch.accelerator.* (current_accelerator(), ...), and no
# framework is pinned to the CPU. Rules about the model's setup (precision,
# pinned batches, cuDNN autotuning, fused optimizers) need it: a framework
# (accelerate, Lightning) or a hint (the nccl backend) says nothing of
# those settings.
device_script(features) if {
	count(features.cuda) + count(features.accelerator) > 0
	count(features.cpu_only) == 0
}

# trains(loops) holds when the script has a training step: a loop that
# calls .backward() or an optimizer's .step(), or a framework's step hook
# (Lightning's training_step, a transformers Trainer's compute_loss).
# Where it holds, evaluation loops and loaders are not the workload.
trains(loops) if {
	some l in loops
	l.trains
}

trains(loops) if {
	some l in loops
	l.framework != ""
}

# call_names(fn) are the names a call of function fn (input.functions)
# has: its own, and, for a method (first parameter self), ".name".
call_names(fn) := {fn.name, concat("", [".", fn.name])} if {
	count(fn.params) > 0
	fn.params[0] == "self"
} else := {fn.name}

# eval_in_training(eval, loops) holds for an evaluation loop or loader
# (its eval flag) of a script that trains: it slows evaluation, not the
# training step, and the script rules leave it out.
eval_in_training(eval, loops) if {
	eval == true
	trains(loops)
}

# device_word(features) names the script's device in a message: "CUDA" for
# a script that names CUDA, "GPU" for one that picks its device through
# torch.accelerator.
device_word(features) := "CUDA" if count(features.cuda) > 0

else := "GPU"

# sync_label(c) names the host sync that call c is (undefined when c does
# not make the host wait for the GPU).
sync_label(c) := sprintf("%s()", [c.name]) if {
	c.name in {".item", ".tolist"}
}

sync_label(c) := ".cpu()" if {
	c.name == ".cpu"
	not c.on_module
}

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

sync_label(c) := sprintf("print(%s)", [concat(", ", c.tensor_args)]) if {
	c.name == "print"
	count(c.tensor_args) > 0
}

sync_label(c) := sprintf("%s(\"cpu\")", [c.name]) if {
	c.name == ".to"
	count(c.args) > 0
	literal(c.args[0], "cpu")
	not c.on_module
}

# cpu_name holds for a variable that names the CPU device (cpu_device,
# self.cpu), not the GPU.
cpu_name(t) if regex.match(`(^|[._])cpu($|[._])`, lower(t))

# step_syncs(calls, conditions) is the set of host syncs that run every
# step (unconditionally in a step loop or a step function it calls):
# {loop, site, line, column, label, location}: loop is the step's root loop
# (one step loop and the step functions it calls share it), site the step
# loop or step function the sync is in (for step_where);
# label reads on with "every step" ("loss.item() runs").
step_syncs(calls, conditions) := {s |
	some c in calls
	c.step_loop >= 0
	not c.conditional
	label := sync_label(c)
	s := {"loop": c.step_root, "site": c.step_loop, "line": c.line, "column": c.column, "label": sprintf("%s runs", [label]), "location": loc(c)}
} | {s |
	some k in conditions
	k.step_loop >= 0
	not k.conditional
	count(k.tensors) > 0
	label := sprintf("`%s %s:` turns tensor %s into a Python bool", [k.kind, k.text, concat(", ", k.tensors)])
	s := {"loop": k.step_root, "site": k.step_loop, "line": k.line, "column": k.column, "label": label, "location": loc(k)}
}

# loop_groups(xs) is xs (objects with loop, line and column) grouped by
# loop, each group in source order (line, then column), the groups in
# loop order. One sort: a script with hundreds of step loops costs
# n log n, where comparing every item with every other timed out.
loop_groups(xs) := [[e[3] | some e in array.slice(s, starts[k], group_end(starts, k, count(s)))] |
	s := sort([[x.loop, x.line, x.column, x] | some x in xs])
	starts := [i | some i, _ in s; group_start(s, i)]
	some k, _ in starts
]

group_start(_, 0)

group_start(s, i) if s[i - 1][0] != s[i][0]

group_end(starts, k, n) := starts[k + 1] if k + 1 < count(starts)

else := n

# lines_text(ls) is "line 3" or "lines 3, 5" for a non-empty sorted list.
lines_text(ls) := sprintf("line %d", [ls[0]]) if count(ls) == 1

lines_text(ls) := sprintf("lines %s", [concat(", ", [sprintf("%d", [l]) | some l in ls])]) if count(ls) > 1

# blocking_copy(c) holds for a host-to-device copy of a tensor without
# non_blocking=True: .cuda(), or .to(...) with a device, not of a freshly
# created tensor (cpu-tensor-then-copy), not of a Module (model.to(device)
# moves parameters once), not to the device of an accelerate / Fabric
# object whose prepared DataLoader already placed the batch, not of a
# tensor already on the device (a receiver whose name was last assigned
# from a device move or a factory given device=, c.receiver_origin:
# X = X.to(device) before the loop makes X[idx].to(device) in it return
# X's slice without a copy).
blocking_copy(c) if {
	to_device(c)
	not c.receiver_call in factories
	not c.receiver_assigned in factories
	not c.on_module
	not c.framework_device
	not rpc_result(c)
	not literal(keyword(c, "non_blocking"), true)
	not placed(c.receiver_origin)
}

# placed(o) holds for a call whose value is on the device: a device move,
# or a factory given a device= that is not the CPU.
placed(o) if {
	to_device(o)
	not to_cpu(o)
}

placed(o) if {
	o.name in factories
	o.keywords.device.present
	not cpu_value(o.keywords.device)
}

# to_cpu(o) holds for a move whose device argument names the CPU
# (.to(device="cpu"), .to(torch.device("cpu"))).
to_cpu(o) if cpu_value(o.keywords.device)

to_cpu(o) if cpu_value(o.args[0])

# cpu_value(v) holds for an argument that names the CPU: "cpu",
# torch.device("cpu") or a name such as cpu_device.
cpu_value(v) if {
	v.kind == "string"
	startswith(v.value, "cpu")
}

cpu_value(v) if cpu_name(v.text)

cpu_value(v) if regex.match(`^torch\.device\(\s*["']cpu`, v.text)

# rpc_result holds for a move of what a torch.distributed.rpc call
# returned (rpc.rpc_sync(...).cuda()): a model or tensors fetched from
# another process, which non_blocking does not apply to.
rpc_result(c) if startswith(c.receiver_call, "torch.distributed.rpc.")

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
	not cpu_name(a.text)
}

# .to(local_rank) / .to(rank) / .to(gpu): DDP scripts pass the GPU index.
to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "name"
	regex.match(`(^|[._])(local_rank|rank|gpu|gpu_id|device_id)$`, lower(a.text))
}

to_device(c) if {
	c.name == ".to"
	count(c.args) > 0
	a := c.args[0]
	a.kind == "name"
	contains(lower(a.text), "cuda")
}

# .to(dev) after dev = torch.device("cuda") or dev = "cuda" if ... else "cpu".
to_device(c) if {
	c.name == ".to"
	c.device_arg
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


# step_where(loops, i) names step loop i of a script's loops in a message:
# "step loop at line 12"; for a step function (kind "function"), "in
# train_step(), called from the step loop at line 40", "in loss_fn(), called
# from train_step() at line 17" or, for a framework's step hook, "in
# training_step(), which Lightning runs every batch".
step_where(loops, i) := sprintf("step loop at line %d", [loops[i].line]) if {
	loops[i].kind != "function"
	not loops[i].eval
}

step_where(loops, i) := sprintf("evaluation loop at line %d", [loops[i].line]) if {
	loops[i].kind != "function"
	loops[i].eval
}

step_where(loops, i) := sprintf("in %s(), which %s runs every batch", [l.function, l.framework]) if {
	l := loops[i]
	l.kind == "function"
	l.parent < 0
}

step_where(loops, i) := sprintf("in %s(), called from the step loop at line %d", [l.function, loops[l.parent].line]) if {
	l := loops[i]
	l.kind == "function"
	l.parent >= 0
	loops[l.parent].kind != "function"
}

step_where(loops, i) := sprintf("in %s(), called from %s() at line %d", [l.function, loops[l.parent].function, l.call_line]) if {
	l := loops[i]
	l.kind == "function"
	l.parent >= 0
	loops[l.parent].kind == "function"
}

# optimizer_step(c) holds for an optimizer's (or a GradScaler's) .step().
optimizer_step(c) if {
	c.name == ".step"
	regex.match(`(?i)(opt|scaler)`, c.receiver)
}

# remainder(k) holds for a condition that takes a remainder, itself or
# through the name it tests (update = (i + 1) % k == 0; if update:): the
# gate of gradient accumulation or of logging every N steps.
remainder(k) if contains(k.text, "%")

remainder(k) if contains(k.assigned, "%")

# lightning_trainer(name) holds for Lightning's Trainer by its canonical
# names.
lightning_trainer(name) if regex.match(`^(lightning|pytorch_lightning)(\.pytorch)?\.Trainer$`, name)
