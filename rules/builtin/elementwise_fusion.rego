# METADATA
# title: Chains of small elementwise kernels to fuse
# description: |
#   **Why it matters.** Eager PyTorch runs every pointwise op (`add`, `mul`,
#   `gelu`, `dropout`, normalisation arithmetic) as its own kernel that reads
#   its inputs from GPU memory and writes its output back. A run of three or
#   more short elementwise kernels on one stream does the memory traffic
#   several times over, and on a busy host each kernel is a launch. A fused
#   kernel reads once, computes the whole chain in registers and writes
#   once. The facts find maximal runs of at least 3 consecutive kernels
#   under 20 us whose name contains `elementwise` (on CPU-only traces:
#   top-level pointwise `aten::` ops); the rule fires when they take at
#   least 2% of the time (`min_time_ratio`, a stepdoctor default).
#
#   **How to confirm.** In the trace viewer, the GPU stream shows runs of
#   `vectorized_elementwise_kernel` / `unrolled_elementwise_kernel` back to
#   back; the CPU thread above shows the matching `aten::add`, `aten::mul`,
#   ... calls.
#
#   **Fix.** Let the compiler fuse them, or use fused ops:
#
#   ```python variant=default
#   model = torch.compile(model)     # TorchInductor fuses pointwise chains
#   # or fused building blocks where the chains come from them
#   y = F.scaled_dot_product_attention(q, k, v)               # attention written as matmul, softmax, matmul
#   opt = torch.optim.AdamW(model.parameters(), fused=True)   # an Adam/AdamW update
#   # torch.jit.script only on PyTorch < 2.0 (its fuser is deprecated)
#   ```
#
#   When the longest chain is a single-tensor optimizer's per-parameter
#   update (`addcmul_`, `sqrt`, `addcdiv_`, ... in `Optimizer.step`), batch
#   the update first, keeping the optimizer class (optimizer-foreach), and
#   compile the model for the rest:
#
#   ```python variant=optimizer
#   opt = torch.optim.Adagrad(model.parameters(), lr=lr, foreach=True)  # the class the trace names
#   # Adam / AdamW: fused=True runs the whole update in one kernel per group
#   model = torch.compile(model)     # the chains of the forward and backward
#   ```
#
#   Already compiled (`compiled_kernel_ratio` at least half: most kernel
#   time is Inductor's or launched from compiled regions): the chains come
#   from code the compiler did not capture, eager kernels between compiled
#   graphs; find the graph breaks (the message gives the compiled frames
#   and recompilations the trace shows):
#
#   ```python variant=compiled
#   #   TORCH_LOGS="graph_breaks,recompiles" python train.py
#   model = torch.compile(model, fullgraph=True)  # fails loudly at a graph break
#   ```
#
#   On a GPU older than Volta (compute capability below 7.0), Inductor
#   cannot generate Triton kernels: fuse by hand with PyTorch's fused ops,
#   or with TorchScript's fuser, which generates CUDA without Triton, and
#   replay the rest from CUDA Graphs:
#
#   ```python variant=no-triton
#   y = torch.addcmul(x, a, b)            # instead of x + a * b
#   y = F.silu(x)                         # instead of x * torch.sigmoid(x)
#   opt = torch.optim.AdamW(model.parameters(), fused=True)  # CUDA kernels, no Triton
#   fused_fn = torch.jit.script(fn)       # TorchScript's fuser (deprecated, needs no Triton)
#   model = torch.compile(model, backend="cudagraphs")  # fewer launches, no fusion
#   ```
#
#   **Impact estimate.** `elementwise_chain_time_ratio x (1 - 1 / mean
#   chain length)`: fusing a chain of n memory-bound kernels into one leaves
#   roughly one kernel's time. Likely: the fused kernel's time is estimated.
#   This is GPU busy time, so it never overlaps the idle-time rules.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below (at
#   most medium).
# custom:
#   id: elementwise-fusion
#   severity: medium
#   category: kernel-efficiency
#   requires: [elementwise_chain_count, elementwise_chain_kernels, elementwise_chain_time_ratio]
#   confidence: likely
#   params:
#     min_time_ratio: 0.02
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.compile.html
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#fuse-operations
#     - https://hta.readthedocs.io/en/latest/source/features/kernel_breakdown.html
package stepdoctor.rules.elementwise_fusion

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.optimizer_foreach

params := data.stepdoctor.params["elementwise-fusion"]

unit := "kernels" if input.has_gpu
else := "ops"

# longest names the longest chain: its operators, region and Python line.
longest := sprintf("; the longest (%d %s, %s) runs %s%s%s%s", [
	c.members, unit, lib.dur(c.time_us), concat(", ", c.ops), lib.scope_note(c), lib.site_note(c), optimizer_note,
]) if {
	c := input.elementwise_chain_top[0]
} else := ""

# optimizer_chain: the longest chain is a single-tensor optimizer's
# per-parameter update, which a foreach or fused optimizer batches
# (optimizer-foreach), not a compile of the model.
optimizer_chain if {
	input.optimizer_single_tensor == true
	c := input.elementwise_chain_top[0]
	every op in c.ops {
		op in lib.optimizer_update_ops
	}
}

optimizer_class := sprintf("%s ", [input.optimizer_class]) if input.optimizer_class
else := ""

optimizer_note := sprintf(": the %soptimizer's update, one parameter at a time; a foreach or fused optimizer batches it (optimizer-foreach)", [optimizer_class]) if optimizer_chain
else := ""

fix := "optimizer" if optimizer_chain
else := "no-triton" if {
	input.has_gpu == true
	lib.triton_unsupported
} else := "compiled" if lib.compiled
else := "default"

# optimizer_share: on a CPU job whose longest chain is a single-tensor
# optimizer's per-parameter update, the time optimizer-foreach claims is
# not claimed again here.
optimizer_share := optimizer_foreach.claim if {
	input.has_gpu == false
	c := input.elementwise_chain_top[0]
	every op in c.ops {
		op in lib.optimizer_update_ops
	}
} else := 0

# remedy: what removes the chains; compiled code is not told to compile.
remedy := concat("", ["; fusing each chain into one kernel removes most of it", lib.triton_note, ": fuse by hand (torch.addcmul, F.silu, fused optimizers) or with torch.jit.script"]) if {
	input.has_gpu == true
	lib.triton_unsupported
} else := concat("", ["; they run outside the compiled graphs", lib.compile_note, ": removing the graph breaks lets Inductor fuse them"]) if lib.compiled
else := "; fusing each chain into one kernel (torch.compile) removes most of it"

# measured: GPU kernel chains, or the operator chains of a CPU job. A GPU
# job recorded without its GPU activity shows only the operators that
# launched the kernels: their chains say nothing about the kernels.
measured if input.has_gpu == true

measured if lib.cpu_job

finding contains f if {
	measured
	n := input.elementwise_chain_count
	n >= 1
	ratio := input.elementwise_chain_time_ratio
	ratio >= params.min_time_ratio
	mean_len := input.elementwise_chain_kernels / n
	impact := max([0, ratio * (1 - (1 / max([1, mean_len]))) - optimizer_share])
	impact > 0
	f := {
		"msg": sprintf("%d chains of short elementwise %s (%d %s, %s per chain) take %s %s%s%s", [n, unit, input.elementwise_chain_kernels, unit, lib.fixed(mean_len, 1), lib.pct(ratio), lib.of_time, longest, remedy]),
		"impact": impact,
		"fix": fix,
		"severity": lib.severity(impact, "medium"),
		"evidence": [
			{"name": "elementwise_chain_count", "value": n, "unit": "count"},
			{"name": "elementwise_chain_kernels", "value": input.elementwise_chain_kernels, "unit": "count"},
			{"name": "elementwise_chain_time_ratio", "value": ratio, "unit": "ratio"},
		],
	}
}
