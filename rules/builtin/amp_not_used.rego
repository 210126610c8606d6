# METADATA
# title: Matmuls run in fp32 on a tensor-core GPU
# description: |
#   **Why it matters.** Since Volta (compute capability 7.0) NVIDIA GPUs
#   (and AMD Instinct GPUs with matrix cores) run fp16/bf16 matrix
#   multiplies and convolutions on tensor cores at many times their fp32
#   rate, and half-precision activations halve memory traffic. A model that
#   keeps its matmuls and convolutions in fp32 leaves most of that on the
#   table. The rule fires when at least half of the matmul/conv kernel time
#   ran in fp32 (`min_fp32_share`) on a device of compute capability 7.0 or
#   later (`min_compute_major`). NVIDIA's mixed-precision training guide
#   and the PyTorch AMP recipe describe the change.
#
#   **How to confirm.** With `record_shapes=True`, the operator table shows
#   `aten::mm` / `aten::addmm` / `aten::convolution` inputs of dtype
#   `float`; the kernels behind them have no `hmma`/`xmma`/`gmma`/`mfma`
#   (tensor-core) names.
#
#   **Fix.** Autocast the forward pass; on Ampere and later allow TF32 for
#   what stays in fp32:
#
#   ```python
#   torch.backends.cuda.matmul.allow_tf32 = True   # or torch.set_float32_matmul_precision("high")
#   torch.backends.cudnn.allow_tf32 = True
#   for x, y in loader:
#       with torch.autocast("cuda", dtype=torch.bfloat16):   # fp16 + GradScaler on Volta/Turing
#           loss = model(x).loss
#       loss.backward()
#       opt.step(); opt.zero_grad(set_to_none=True)
#   ```
#
#   **Impact estimate.** `gpu_busy_ratio x (1 - tensor_core_kernel_time_ratio)
#   x fp32_matmul_time_ratio x 0.5` (`speedup_share`): the non-tensor-core
#   busy time, scaled by the fp32 share of matmul time, of which about half
#   is saved (matmuls speed up several-fold under autocast, elementwise ops
#   that stay memory-bound less). A rough, likely estimate: the trace does
#   not give the matmul time itself.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below (at
#   most medium).
# custom:
#   id: amp-not-used
#   severity: medium
#   category: kernel-efficiency
#   requires: [has_gpu, has_shapes, device, gpu_busy_ratio, fp32_matmul_time_ratio, tensor_core_kernel_time_ratio]
#   confidence: likely
#   params:
#     min_fp32_share: 0.5
#     min_compute_major: 7
#     speedup_share: 0.5
#   references:
#     - https://pytorch.org/docs/stable/amp.html
#     - https://pytorch.org/tutorials/recipes/recipes/amp_recipe.html
#     - https://docs.nvidia.com/deeplearning/performance/mixed-precision-training/index.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
package stepdoctor.rules.amp_not_used

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["amp-not-used"]

tf32 := "; TF32 (torch.set_float32_matmul_precision(\"high\")) helps what stays fp32" if input.device.compute_major >= 8
else := ""

finding contains f if {
	major := input.device.compute_major
	major >= params.min_compute_major
	fp32 := input.fp32_matmul_time_ratio
	fp32 >= params.min_fp32_share
	tc := input.tensor_core_kernel_time_ratio
	impact := ((input.gpu_busy_ratio * (1 - tc)) * fp32) * params.speedup_share
	f := {
		"msg": sprintf("%s of matmul/conv kernel time runs in fp32 on %s (compute capability %d.%d, tensor cores); only %s of kernel time is in tensor-core kernels: use torch.autocast with bf16/fp16%s", [lib.pct(fp32), device_name, major, lib.num(input.device.compute_minor), lib.pct(tc), tf32]),
		"impact": impact,
		"severity": lib.severity(impact, "medium"),
		"evidence": [
			{"name": "fp32_matmul_time_ratio", "value": fp32, "unit": "ratio"},
			{"name": "tensor_core_kernel_time_ratio", "value": tc, "unit": "ratio"},
			{"name": "gpu_busy_ratio", "value": input.gpu_busy_ratio, "unit": "ratio"},
		],
	}
}

device_name := input.device.name if input.device.name != ""
else := "the GPU"
