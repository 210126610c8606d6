# METADATA
# title: One kernel takes most of the GPU time
# description: |
#   **Why it matters.** When one kernel name holds 40% or more of the
#   compute kernel time, the step's speed is that kernel's speed: the
#   fix is specific to what it computes. A softmax that large means
#   attention is computed as matmul, softmax, matmul, writing the full
#   sequence-by-sequence score matrix to memory and reading it back; a
#   normalization or reduction kernel that large is memory-bound work the
#   compiler or a fused kernel can merge with its neighbours.
#
#   **How to confirm.** The kernel table (sorted by total time) shows the
#   kernel at the top; the operator that launches it is in the trace
#   viewer's flow arrows, and with `record_shapes=True` its input shapes.
#
#   **Fix.** For attention written by hand:
#
#   ```python variant=attention
#   import torch.nn.functional as F
#   # instead of
#   #   scores = q @ k.transpose(-2, -1) / math.sqrt(d)
#   #   out = scores.softmax(-1) @ v
#   out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # flash / memory-efficient kernels
#   ```
#
#   For normalization and reductions:
#
#   ```python variant=norm
#   model = torch.compile(model)   # fuses the norm with its neighbours
#   # or a fused module: torch.nn.RMSNorm / apex FusedLayerNorm
#   ```
#
#   On a GPU older than Volta (compute capability below 7.0) Inductor cannot
#   generate Triton kernels; use a fused module instead:
#
#   ```python variant=norm-no-triton
#   # a fused module (one CUDA kernel, no Triton): torch.nn.LayerNorm / torch.nn.RMSNorm
#   # (PyTorch 2.4+) / apex FusedLayerNorm, instead of a norm written out in pointwise ops
#   ```
#
#   An Inductor kernel (`triton_...`, torch.compile already fused it), or a
#   norm that compiled code (`compiled_kernel_ratio` at least half) left to
#   an eager kernel: do not compile again; read the generated code, find
#   the graph break or fallback, and let Inductor tune it:
#
#   ```python variant=compiled
#   #   TORCH_LOGS="output_code,graph_breaks" python train.py   # generated kernels, and why ops were left out
#   model = torch.compile(model, mode="max-autotune")  # autotunes the Triton configs and GEMM templates
#   ```
#
#   For other kernels, look up the operator that launches it and its
#   shapes:
#
#   ```python variant=default
#   prof.key_averages(group_by_input_shape=True).table(sort_by="cuda_time_total", row_limit=10)
#   ```
#
#   **Impact estimate.** For softmax and normalization kernels,
#   `top_kernel_time_ratio x (1 - 1/speedup)` (speedup 2 by default): the
#   kernel's measured time in the window, of which a fused kernel gives
#   back about half. Other kernels: 0 (the finding says what dominates,
#   not what a fix saves). Likely.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: dominant-kernel
#   severity: high
#   category: kernel-efficiency
#   requires: [has_gpu, kernel_count, gpu_busy_ratio, top_kernel_name, top_kernel_share, top_kernel_time_ratio]
#   confidence: likely
#   params:
#     min_share: 0.4
#     min_kernels: 10
#     min_busy_ratio: 0.3
#     speedup: 2
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
#     - https://pytorch.org/tutorials/intermediate/scaled_dot_product_attention_tutorial.html
#     - https://pytorch.org/docs/stable/generated/torch.compile.html
package stepdoctor.rules.dominant_kernel

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["dominant-kernel"]

name := lower(input.top_kernel_name)

# Kinds with their own rule (matmul: amp-not-used; elementwise: fusion;
# attention kernels that are already fused) stay with those.
handled if contains(name, "gemm")

handled if contains(name, "elementwise")

handled if contains(name, "flash")

handled if contains(name, "fmha")

kind := "compiled" if startswith(name, "triton_")
else := "attention" if contains(name, "softmax")
else := "compiled_norm" if {
	is_norm
	lib.compiled
} else := "norm_no_triton" if {
	is_norm
	lib.triton_unsupported
} else := "norm" if is_norm
else := "default"

is_norm if contains(name, "norm")

is_norm if contains(name, "reduce")

# variant is the fix block: a norm left outside Inductor's kernels in
# compiled code gets the compiled block (graph breaks), not torch.compile.
variant := "compiled" if kind == "compiled_norm"
else := "norm-no-triton" if kind == "norm_no_triton"
else := kind

what := {
	"attention": "a softmax: attention computed as matmul, softmax, matmul; F.scaled_dot_product_attention runs it as one flash or memory-efficient kernel",
	"norm": "a normalization or reduction, memory-bound: fuse it (torch.compile, a fused norm)",
	"norm_no_triton": concat("", ["a normalization or reduction, memory-bound: fuse it with a fused norm module", lib.triton_note, ", so torch.compile cannot fuse it"]),
	"compiled_norm": "a normalization or reduction the compiled code left to an eager kernel (an op Inductor falls back on, or a graph break): TORCH_LOGS=\"graph_breaks\" shows why it was not fused",
	"compiled": "a kernel torch.compile (Inductor) generated, already fused: read its source (TORCH_LOGS=output_code) and try mode=\"max-autotune\"",
	"default": "look up the operator that launches it and its shapes",
}

impact := input.top_kernel_time_ratio * (1 - (1 / params.speedup)) if {
	kind != "default"
	kind != "compiled"
}
else := 0

finding contains f if {
	not handled
	input.kernel_count >= params.min_kernels
	input.gpu_busy_ratio >= params.min_busy_ratio
	input.top_kernel_share >= params.min_share
	f := {
		"msg": sprintf("One kernel takes %s of compute kernel time (%s %s): %s; it is %s", [
			lib.pct(input.top_kernel_share), lib.pct(input.top_kernel_time_ratio), lib.of_time,
			input.top_kernel_name, what[kind],
		]),
		"impact": impact,
		"fix": variant,
		"severity": lib.severity(impact, "high"),
		"evidence": [
			{"name": "top_kernel_share", "value": input.top_kernel_share, "unit": "ratio"},
			{"name": "top_kernel_time_ratio", "value": input.top_kernel_time_ratio, "unit": "ratio"},
		],
	}
}
