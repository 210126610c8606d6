# METADATA
# title: Optimizer steps one parameter at a time
# description: |
#   **Why it matters.** The single-tensor optimizer implementation loops
#   over parameters in Python and launches several small kernels per
#   parameter (for Adam: about ten), so a model with hundreds of parameter
#   tensors spends the optimizer step launching thousands of tiny kernels
#   while the GPU waits. The multi-tensor (`foreach=True`) implementation
#   batches them into a few `_foreach_*` kernels; `fused=True` runs the whole
#   update in one kernel per group. PyTorch picks foreach by default on CUDA
#   only when every parameter qualifies; custom optimizers, CPU parameters
#   or `foreach=False` fall back to the loop. The facts call an optimizer
#   step single-tensor when it runs per-parameter ops and no
#   `aten::_foreach_*` / `aten::_fused_*` op.
#
#   **How to confirm.** In the trace viewer, `Optimizer.step#...` spans hold
#   long runs of `aten::mul_`, `aten::add_`, `aten::addcdiv_`, ... (one
#   group per parameter) and the GPU rows are sparse underneath.
#
#   **Fix.** Pass `foreach=True`, or `fused=True` where the optimizer has
#   a fused kernel; the fix block follows the optimizer class the trace's
#   `Optimizer.step#CLASS.step` spans name (`optimizer_class`):
#
#   ```python variant=default
#   opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)    # CUDA, fp32/fp16/bf16 params
#   opt = torch.optim.SGD(model.parameters(), lr=lr, foreach=True)    # multi-tensor
#   ```
#
#   ```python variant=sgd
#   opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, foreach=True)  # multi-tensor
#   # recent PyTorch also takes fused=True for SGD on CUDA (see torch.optim.SGD)
#   ```
#
#   ```python variant=adam
#   opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)    # one kernel per group (CUDA; Adam too)
#   # or foreach=True: a few multi-tensor kernels
#   ```
#
#   The other `torch.optim` optimizers (Adagrad, RMSprop, Adadelta, Adamax,
#   NAdam, RAdam, ASGD, Rprop) take `foreach=True` too; keep the class the
#   trace names, and the algorithm with it:
#
#   ```python variant=foreach
#   opt = torch.optim.Adagrad(model.parameters(), lr=lr, foreach=True)   # the same class, multi-tensor
#   ```
#
#   On a CPU job PyTorch never picks foreach by itself (the default applies
#   to CUDA tensors only), so every optimizer runs the per-parameter loop
#   unless `foreach=True` is passed (or, from PyTorch 2.4, `fused=True`):
#
#   ```python variant=cpu
#   opt = torch.optim.AdamW(model.parameters(), lr=lr, foreach=True)
#   ```
#
#   **Impact estimate.** On a GPU job, the GPU idle time while the host was
#   in optimizer spans (`gpu_idle_optimizer_ratio`), less what
#   optimizer-zero-grad claims: the multi-tensor step issues a handful of
#   kernels instead of several per parameter, so almost all of that host
#   time goes. On a CPU job, `optimizer_time_ratio x cpu_saving` (default
#   0.3): the per-parameter dispatch goes, the arithmetic stays; Adam on a
#   196-tensor model recorded for this project (testdata/recorded,
#   optimizer_no_foreach) went from 19.5 to 14.0 ms per step with
#   `foreach=True`, 28% of its time. Likely: the remaining foreach time is
#   not measured.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: optimizer-foreach
#   severity: high
#   category: host-overhead
#   requires: [optimizer_single_tensor]
#   examples: idle_optimizer
#   confidence: likely
#   params:
#     cpu_saving: 0.3
#   references:
#     - https://pytorch.org/docs/stable/optim.html#algorithms
#     - https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
package stepdoctor.rules.optimizer_foreach

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.optimizer_zero_grad

ops := sprintf(", %s ops per step", [lib.fixed(input.optimizer_ops_per_step, 0)]) if input.optimizer_ops_per_step != null
else := ""

params := data.stepdoctor.params["optimizer-foreach"]

# claim: the time this rule owns (0 when it does not fire); small-batch,
# repeated-small-op and elementwise-fusion leave it to this rule.
claim := max([0, input.gpu_idle_optimizer_ratio - optimizer_zero_grad.claim]) if {
	input.optimizer_single_tensor == true
	input.has_gpu == true
	input.gpu_idle_optimizer_ratio != null
} else := input.optimizer_time_ratio * params.cpu_saving if {
	input.optimizer_single_tensor == true
	lib.cpu_job
	input.optimizer_time_ratio != null
} else := 0

# zero_grad_idle is the GPU idle charged to Optimizer.zero_grad#... spans
# (optimizer-zero-grad's measured share of the window), or 0.
zero_grad_idle := optimizer_zero_grad.measured if optimizer_zero_grad.measured
else := 0

# With foreach, zero_grad(set_to_none=False) zeroes the gradients with one
# _foreach_zero_ too, so its idle stays in the claim unless
# optimizer-zero-grad (set_to_none) claims it; the message splits it out.
while := sprintf("the GPU is idle %s %s while Optimizer.step and zero_grad run (%s in zero_grad: zero_grad(set_to_none=True) removes it, and with foreach=True it is one _foreach_zero_)", [lib.pct(input.gpu_idle_optimizer_ratio), lib.of_time, lib.pct(zero_grad_idle)]) if {
	input.has_gpu == true
	input.gpu_idle_optimizer_ratio != null
	zero_grad_idle >= 0.0005
} else := sprintf("the GPU is idle %s %s while it runs", [lib.pct(input.gpu_idle_optimizer_ratio), lib.of_time]) if {
	input.has_gpu == true
	input.gpu_idle_optimizer_ratio != null
} else := sprintf("Optimizer.step and zero_grad take %s %s on the CPU, where PyTorch does not pick foreach by itself", [lib.pct(input.optimizer_time_ratio), lib.of_time])

fix := "cpu" if lib.cpu_job
else := "sgd" if input.optimizer_class == "SGD"
else := "adam" if input.optimizer_class in {"Adam", "AdamW"}
else := "foreach" if input.optimizer_class in foreach_classes
else := "default"

# foreach_classes are the other torch.optim optimizers with a foreach=
# implementation.
foreach_classes := {"Adagrad", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"}

# same_class tells the fix for them in the message: the block cannot
# name the class.
same_class := sprintf("; torch.optim.%s(..., foreach=True) keeps the algorithm", [input.optimizer_class]) if fix == "foreach"
else := ""

# which names the optimizer class when the trace gives it.
which := sprintf("The %s step", [input.optimizer_class]) if input.optimizer_class
else := "The optimizer step"

finding contains f if {
	input.optimizer_single_tensor == true
	claim > 0
	f := {
		"msg": sprintf("%s runs the single-tensor implementation (per-parameter ops, no _foreach_/_fused_ kernels%s); %s%s", [which, ops, while, same_class]),
		"impact": claim,
		"fix": fix,
		"severity": lib.severity(claim, "high"),
		"evidence": [
			{"name": "gpu_idle_optimizer_ratio", "value": input.gpu_idle_optimizer_ratio, "unit": "ratio"},
			{"name": "optimizer_ops_per_step", "value": input.optimizer_ops_per_step, "unit": "per_step"},
			{"name": "optimizer_time_ratio", "value": input.optimizer_time_ratio, "unit": "ratio"},
		],
	}
}
