# METADATA
# title: Matmuls run in fp32 on a tensor-core GPU
# description: |
#   **Why it matters.** Since Volta (compute capability 7.0) NVIDIA GPUs
#   (and AMD Instinct GPUs with matrix cores) run fp16/bf16 matrix
#   multiplies and convolutions on tensor cores at many times their fp32
#   rate, and half-precision activations halve memory traffic. A model that
#   keeps its matmuls and convolutions in fp32 leaves most of that on the
#   table. The rule fires when fp32 matmul/conv kernels could give back at
#   least 0.5% of the window (`min_impact`) on a device of compute
#   capability 7.0 or later (`min_compute_major`). NVIDIA's mixed-precision training guide
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
#   ```python variant=default
#   torch.backends.cuda.matmul.allow_tf32 = True   # or torch.set_float32_matmul_precision("high")
#   torch.backends.cudnn.allow_tf32 = True
#   for x, y in loader:
#       with torch.autocast("cuda", dtype=torch.bfloat16):   # fp16 + GradScaler on Volta/Turing
#           loss = model(x).loss
#       loss.backward()
#       opt.step(); opt.zero_grad(set_to_none=True)
#   ```
#
#   On Volta and Turing (compute capability 7.x, no bf16 tensor cores),
#   fp16 with a GradScaler:
#
#   ```python variant=fp16
#   scaler = torch.amp.GradScaler("cuda")    # torch.cuda.amp.GradScaler() before PyTorch 2.3
#   for x, y in loader:
#       with torch.autocast("cuda", dtype=torch.float16):
#           loss = model(x).loss
#       scaler.scale(loss).backward()
#       scaler.step(opt); scaler.update()
#       opt.zero_grad(set_to_none=True)
#   ```
#
#   On AMD Instinct GPUs (ROCm), bf16 autocast uses the matrix cores; TF32
#   flags do not apply before MI300:
#
#   ```python variant=rocm
#   for x, y in loader:
#       with torch.autocast("cuda", dtype=torch.bfloat16):  # "cuda" is the HIP device on ROCm
#           loss = model(x).loss
#       loss.backward()
#       opt.step(); opt.zero_grad(set_to_none=True)
#   ```
#
#   For inference, no scaler and no backward:
#
#   ```python variant=inference
#   model.eval()
#   with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):  # float16 before compute capability 8.0
#       out = model(x)
#   # or convert the weights once: model = model.to(torch.bfloat16)
#   ```
#
#   **Impact estimate.** `fp32_matmul_kernel_time_ratio x (1 - 1/speedup)`
#   (docs/ARCHITECTURE.md "Impact"): the fp32 matmul/conv kernel time in the window,
#   measured from the kernels (by op dtype with `record_shapes=True`, else
#   by fp32 GEMM kernel names such as `volta_sgemm`), of which a
#   `speedup`-fold (default 2) faster half-precision kernel gives back
#   1 - 1/speedup. Elementwise kernels and communication are not counted.
#   Likely: the speed-up depends on shapes.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below (at
#   most medium).
# custom:
#   id: amp-not-used
#   severity: medium
#   category: kernel-efficiency
#   requires: [has_gpu, device, fp32_matmul_kernel_time_ratio]
#   confidence: likely
#   params:
#     min_impact: 0.005
#     min_compute_major: 7
#     speedup: 2
#   references:
#     - https://pytorch.org/docs/stable/amp.html
#     - https://pytorch.org/tutorials/recipes/recipes/amp_recipe.html
#     - https://docs.nvidia.com/deeplearning/performance/mixed-precision-training/index.html
#     - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
package stepdoctor.rules.amp_not_used

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["amp-not-used"]

tf32 := "; TF32 (torch.set_float32_matmul_precision(\"high\")) helps what stays fp32" if {
	not lib.rocm
	input.device.compute_major >= 8
} else := ""

fix := "inference" if lib.inference
else := "rocm" if lib.rocm
else := "fp16" if input.device.compute_major < 8
else := "default"

# AMD reports a gfx version as the compute capability: name the device only.
capability := "" if lib.rocm
else := sprintf(" (compute capability %d.%d or newer by its %s kernels, tensor cores)", [input.device.compute_major, lib.num(input.device.compute_minor), input.device.compute_from]) if {
	object.get(input.device, "compute_from", "") != ""
} else := sprintf(" (compute capability %d.%d, tensor cores)", [input.device.compute_major, lib.num(input.device.compute_minor)])

share := sprintf(" (%s of matmul/conv kernel time)", [lib.pct(input.fp32_matmul_time_ratio)]) if input.fp32_matmul_time_ratio != null
else := ""

how := "torch.autocast with bf16 (no GradScaler for inference)" if {
	lib.inference
	input.device.compute_major >= 8
} else := "torch.autocast with fp16" if lib.inference
else := "torch.autocast with bf16 on the matrix cores" if lib.rocm
else := "torch.autocast with bf16" if input.device.compute_major >= 8
else := "torch.autocast with fp16 and a GradScaler"

finding contains f if {
	major := input.device.compute_major
	major >= params.min_compute_major
	fp32 := input.fp32_matmul_kernel_time_ratio
	impact := fp32 * (1 - (1 / params.speedup))
	impact >= params.min_impact
	f := {
		"msg": sprintf("fp32 matmul/conv kernels run %s %s%s on %s%s: use %s%s", [lib.pct(fp32), lib.of_time, share, device_name, capability, how, tf32]),
		"fix": fix,
		"impact": impact,
		"severity": lib.severity(impact, "medium"),
		"evidence": [
			{"name": "fp32_matmul_kernel_time_ratio", "value": fp32, "unit": "ratio"},
			{"name": "fp32_matmul_time_ratio", "value": input.fp32_matmul_time_ratio, "unit": "ratio"},
			{"name": "tensor_core_kernel_time_ratio", "value": input.tensor_core_kernel_time_ratio, "unit": "ratio"},
		],
	}
}

device_name := input.device.name if input.device.name != ""
else := "the GPU"
