# METADATA
# title: cuDNN autotuner off for a convolutional model
# description: |
#   **Why it matters.** With `torch.backends.cudnn.benchmark = True`, cuDNN
#   times the available convolution algorithms for each input shape once and
#   uses the fastest; otherwise it picks by heuristics, often slower. It pays
#   off when input shapes repeat (fixed image size), the usual case in training.
#
#   **Fix.**
#
#   ```python
#   torch.backends.cudnn.benchmark = True   # once, before the training loop
#   ```
#
#   Leave it off when every batch has a new shape (each new shape is re-timed)
#   or when you need bitwise determinism.
#
#   **How to confirm.** What stepdoctor matches: A CUDA script (or one that picks its device
#   through `torch.accelerator`) that builds convolutions
#   (`torch.nn.Conv1d/2d/3d`, `torchvision.models.*`, also picked by name as
#   in `models.__dict__[arch]()`) and assigns the literal `False` to
#   `torch.backends.cudnn.benchmark` (reported there), or never sets it
#   (reported at the first convolution). A Lightning `Trainer(benchmark=...)`
#   and `Trainer(deterministic=True)` count as those settings, and a
#   Lightning script is told of `Trainer(benchmark=True)`; a Trainer or
#   Fabric given `accelerator="gpu"` / `"cuda"` makes the script a CUDA
#   script. Convolutions built and cuDNN
#   settings made in a module of the script's directory that it imports
#   count too (reported at the import). The script needs a loop: autotuning
#   pays off when the same shapes run again, not for a single forward.
#   Determinism is respected: with
#   `cudnn.deterministic = True` or `torch.use_deterministic_algorithms(True)`
#   in every run nothing is reported; when they are set only in a branch
#   (`if args.seed is not None:`) with benchmark False there and never True,
#   the first convolution is reported for the other runs.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 2% of step time (`impact`), with confidence "likely".
# custom:
#   id: cudnn-benchmark-off
#   severity: low
#   category: script
#   requires: [features]
#   confidence: likely
#   params:
#     impact: 0.02
#   references:
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-cudnn-auto-tuner
#     - https://pytorch.org/docs/stable/backends.html#torch.backends.cudnn.torch.backends.cudnn.benchmark
package stepdoctor.rules.cudnn_benchmark_off

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["cudnn-benchmark-off"]

finding contains f if {
	slib.device_script(input.features)
	count(input.features.conv) > 0
	count(input.loops) > 0
	not deterministic
	some u in input.features.cudnn_benchmark
	slib.literal(u.value, false)
	f := {
		"msg": sprintf("torch.backends.cudnn.benchmark is set to False in a convolutional %s model: cuDNN does not autotune its convolution algorithms", [slib.device_word(input.features)]),
		"impact": params.impact,
		"location": slib.loc(u),
	}
}

finding contains f if {
	slib.device_script(input.features)
	count(input.features.conv) > 0
	count(input.loops) > 0
	never_on
	not always_deterministic
	first := input.features.conv[0]
	f := {
		"msg": sprintf("convolutional %s model (%s) without torch.backends.cudnn.benchmark = True%s%s", [slib.device_word(input.features), first.name, trainer_note, determinism_note]),
		"impact": params.impact,
		"location": slib.loc(first),
	}
}

# deterministic holds when the script asks for deterministic kernels
# (cudnn.deterministic = True, torch.use_deterministic_algorithms(True)):
# benchmark = False is then its choice, as the doc above says.
deterministic if {
	some u in input.features.deterministic
	not slib.literal(u.value, false)
}

# always_deterministic holds when every run asks for deterministic kernels
# (the literal True, not only in a branch): benchmark stays off by the
# script's choice. A flag (args.deterministic) or Lightning's default
# deterministic=None may leave them off.
always_deterministic if {
	some u in input.features.deterministic
	not u.in_branch
	slib.literal(u.value, true)
}

# trainer_note names Lightning's own switch when a Lightning Trainer runs
# the model: Trainer(benchmark=None) leaves cudnn.benchmark as it is, off
# unless set.
trainer_note := " (or L.Trainer(benchmark=True))" if {
	some u in input.features.frameworks
	slib.lightning_trainer(u.name)
} else := ""

# never_on holds when no assignment turns benchmark on: none at all, or
# only False beside a request for determinism made in a branch (the
# ImageNet example sets it False under --seed and leaves it off
# otherwise). A variable counts as turning it on; determinism asked for
# in every run keeps benchmark off by choice.
never_on if count(input.features.cudnn_benchmark) == 0

never_on if {
	deterministic
	every d in input.features.deterministic {
		d.in_branch
	}
	every u in input.features.cudnn_benchmark {
		slib.literal(u.value, false)
	}
}

determinism_note := sprintf(" outside determinism: it is set to False only with deterministic kernels (line %d); set it to True for the runs that need no bitwise determinism", [input.features.cudnn_benchmark[0].line]) if {
	count(input.features.cudnn_benchmark) > 0
} else := ""
