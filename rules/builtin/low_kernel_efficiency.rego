# METADATA
# title: The GPU is busy, but its kernels run far below the device's peak
# description: |
#   **Why it matters.** A GPU that is busy all the time can still waste most
#   of it: a GEMM whose output is a few tiles leaves most compute units
#   idle, attention without a fused kernel spends its time in separate
#   matmuls and softmax passes through memory, and fp32 work on tensor-core
#   hardware runs at a fraction of the bf16/TF32 rate. None of this shows as
#   idle time. The rule compares each modelled matmul, convolution and
#   attention op (FLOPs and bytes from `Input Dims` and `Input type`, time
#   from the kernels it launched) with the device's roofline: the lower of
#   its dtype's peak FLOP/s and its arithmetic intensity times the memory
#   bandwidth (vendor datasheets, `device_peak`). It fires when the GPU is
#   busy (`min_busy`) and ops below `max_ratio` of their roofline take at
#   least `min_share` of kernel time. TraceLens computes the same roofline
#   per op; Nsight Compute and rocprof measure it per kernel with counters.
#
#   **How to confirm.** The finding names the op, its shapes and dtype, its
#   achieved FLOP/s and the peak; `stepdoctor facts` lists `roofline_ops`
#   and `roofline_kinds`. Profile that kernel with Nsight Compute (`ncu
#   --set full`) or `rocprofv3` to see occupancy and the pipe utilisation.
#
#   **Fix.** By the likely cause the finding names:
#
#   - Too few workgroups (output tiles of 128x128 below the SM/CU count):
#     give one call more output (a larger batch or sequence, stack small
#     GEMMs into one `torch.bmm`), or let the library split K
#     (`torch.compile(mode="max-autotune")` tries split-K and stream-K
#     GEMMs); put the large dimension in the output, not in K.
#   - Attention without a fused kernel: call
#     `torch.nn.functional.scaled_dot_product_attention` with fp16/bf16
#     inputs so the flash or memory-efficient kernel runs; check which
#     backend ran with `torch.nn.attention.sdpa_kernel`.
#   - fp32 on tensor-core hardware: `torch.set_float32_matmul_precision("high")`
#     (TF32) or `torch.autocast(dtype=torch.bfloat16)`.
#   - Dimensions off the tensor-core multiple: pad M, N and K to multiples of
#     8 (16 for fp8).
#
#   The fix shown follows the likely cause of the op the finding names:
#
#   ```python variant=default
#   # too few output tiles: one batched GEMM instead of many small ones
#   out = torch.bmm(torch.stack(xs), torch.stack(ws))
#   # or let the compiler search split-K / stream-K GEMMs for the shape
#   model = torch.compile(model, mode="max-autotune")
#   ```
#
#   ```python variant=unfused-attention
#   # attention through the fused kernels, in bf16
#   with torch.autocast("cuda", dtype=torch.bfloat16):
#       y = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # attn_mask= or is_causal=True as the model needs
#   ```
#
#   ```python variant=fused-attention
#   # the fused kernel is already used: time the SDPA backends for this shape
#   from torch.nn.attention import sdpa_kernel, SDPBackend
#   for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):  # and CUDNN_ATTENTION on NVIDIA
#       with sdpa_kernel(backend):
#           y = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # keep your attn_mask / is_causal
#   # on ROCm the flash backend is AOTriton's by default; CK's is the other (experimental switch)
#   torch.backends.cuda.preferred_rocm_fa_library("ck")
#   ```
#
#   ```python variant=misaligned
#   # pad the odd dimension to a multiple of 8 (16 for fp8) once, e.g. the vocabulary
#   vocab = (vocab + 63) // 64 * 64
#   model.lm_head = torch.nn.Linear(d_model, vocab, bias=False)
#   ```
#
#   ```python variant=library
#   # the library kernel is slow for this shape: let the compiler search others
#   model = torch.compile(model, mode="max-autotune")
#   ```
#
#   **Impact estimate.** Over the ops below `max_ratio`: each op's kernel
#   time share of the window (`time_ratio`) times `1 - roofline_ratio /
#   attainable`, the part of its time a kernel at `attainable` (default
#   70%) of the roofline would save, summed and capped at `max_impact`.
#   Fused attention kernels reach less of the roofline than GEMMs
#   (FlashAttention-2 reports 50-73% of the A100's fp16 peak forward,
#   FlashAttention-3 about 75% of the H100's), so an already fused
#   attention op is held to `attainable_attention` (default 50%). Where a
#   matmul, convolution or attention op of the same trace reaches
#   `max_ratio` or more, the best such ratio caps the target: it is what
#   this device and software stack are measured to sustain here (for
#   example, where a trace's best GEMM reaches 44.9% of the bf16 peak, an
#   attention op at 22.8% is held to 44.9%, not 50%). The evidence gives
#   the target as `target_ratio`.
#   Measured kernel time; the model assumes dense, non-causal work unless
#   `Concrete Inputs` says otherwise, so it errs towards a smaller impact.
#   Likely: a shape may have no faster kernel.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: low-kernel-efficiency
#   severity: high
#   category: kernel-efficiency
#   requires: [has_gpu, has_shapes, gpu_busy_ratio, device_peak, kernel_roofline_ratio]
#   confidence: likely
#   params:
#     min_busy: 0.5
#     max_ratio: 0.3
#     min_share: 0.2
#     attainable: 0.7
#     attainable_attention: 0.5
#     max_impact: 0.8
#   references:
#     - https://github.com/AMD-AGI/TraceLens
#     - https://arxiv.org/abs/2307.08691
#     - https://arxiv.org/abs/2407.08608
#     - https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html
#     - https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
#     - https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#roofline
package stepdoctor.rules.low_kernel_efficiency

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["low-kernel-efficiency"]

compute_kinds := {"gemm", "conv_fwd", "conv_bwd", "attention_fwd", "attention_bwd"}

# fp32 matmul-type work on tensor-core hardware is amp-not-used's busy
# time: the two rules claim disjoint kernel sets.
amp_owned(op) if {
	op.dtype == "fp32"
	input.device.compute_major >= 7
}

low contains op if {
	some op in input.roofline_ops
	compute_kinds[op.kind]
	op.roofline_ratio != null
	op.roofline_ratio < params.max_ratio
	not amp_owned(op)
}

low_share := sum([op.kernel_share | some op in low])

attainable(op) := params.attainable_attention if {
	op.kind in {"attention_fwd", "attention_bwd"}
	op.fused != false
} else := params.attainable

# achieved is the best roofline ratio a matmul, convolution or attention
# op of the trace reaches (0 without one).
achieved_ratios := [op.roofline_ratio |
	some op in input.roofline_ops
	compute_kinds[op.kind]
	op.roofline_ratio != null
]

achieved := max(achieved_ratios) if count(achieved_ratios) > 0
else := 0

# target is the ratio the fix is held to: attainable, capped by what an op
# of this trace reaches when one reaches max_ratio (measured on this
# device and software stack).
target(op) := min([attainable(op), achieved]) if achieved >= params.max_ratio
else := attainable(op)

saving(op) := op.time_ratio * max([0, 1 - (op.roofline_ratio / target(op))])

impact := min([params.max_impact, sum([saving(op) | some op in low])])

# worst is the low op whose time the fix would save most.
worst := [op |
	some op in low
	saving(op) == max([saving(o) | some o in low])
][0]

tflops(x) := sprintf("%s TFLOP/s", [lib.fixed(round(x / 1e10) / 100, 1)]) if x >= 1e12
else := sprintf("%s GFLOP/s", [lib.fixed(round(x / 1e7) / 100, 1)])

shapes(op) := op.shapes if count(op.shapes) <= 120
else := concat("", [substring(op.shapes, 0, 117), "..."])

kind_name := {
	"gemm": "matmul", "conv_fwd": "convolution", "conv_bwd": "convolution backward",
	"attention_fwd": "attention", "attention_bwd": "attention backward",
}

# cause_kind is the likely cause of an op's low efficiency; it picks the
# message's cause and the fix variant.
cause_kind(op) := "tiles" if {
	op.kind in {"gemm", "conv_fwd", "conv_bwd"}
	op.tiles > 0
	op.tiles < op.compute_units
} else := "query-blocks" if {
	op.kind in {"attention_fwd", "attention_bwd"}
	op.tiles > 0
	op.tiles < op.compute_units
} else := "unfused-attention" if {
	op.fused == false
} else := "misaligned" if {
	op.misaligned == true
} else := "fused-attention" if {
	op.kind in {"attention_fwd", "attention_bwd"}
} else := "library"

cause(op) := sprintf("its output is %d tiles of 128x128 for %d compute units: too few workgroups to fill the device; give one call more output (a larger batch or sequence, small GEMMs stacked into one torch.bmm) or split K (torch.compile(mode=\"max-autotune\"))", [op.tiles, op.compute_units]) if {
	cause_kind(op) == "tiles"
} else := sprintf("it gives %d query blocks (batch x heads x 128 rows) for %d compute units: too little parallel work; batch more sequences or use a split-KV (flash-decoding) kernel", [op.tiles, op.compute_units]) if {
	cause_kind(op) == "query-blocks"
} else := "attention runs without a fused kernel (separate matmuls and softmax through memory): call torch.nn.functional.scaled_dot_product_attention with fp16/bf16 inputs so the flash or memory-efficient kernel runs" if {
	cause_kind(op) == "unfused-attention"
} else := "a dimension is not a multiple of 8, so tensor-core tiles run partly empty: pad M, N and K to multiples of 8 (16 for fp8)" if {
	cause_kind(op) == "misaligned"
} else := sprintf("the fused attention kernel itself runs far below the roofline: try another SDPA backend (torch.nn.attention.sdpa_kernel)%s; the flash backend on ROCm is AOTriton's by default, CK's the other (torch.backends.cuda.preferred_rocm_fa_library(\"ck\"), experimental); profile the kernel with rocprofv3", [head_dim_note(op)]) if {
	cause_kind(op) == "fused-attention"
	lib.rocm
} else := sprintf("the fused attention kernel itself runs far below the roofline: try another SDPA backend (torch.nn.attention.sdpa_kernel, cuDNN attention among them)%s; profile the kernel with Nsight Compute", [head_dim_note(op)]) if {
	cause_kind(op) == "fused-attention"
} else := "the library's kernel runs far below the roofline for this shape: profile it with Nsight Compute or rocprofv3, and try torch.compile(mode=\"max-autotune\") to search other kernels"

# head_dim is the head dimension of an attention op: the last size of its
# first input, [batch, heads, sequence, head_dim] (Input Dims).
head_dim(op) := to_number(m[1]) if {
	m := regex.find_all_string_submatch_n(`^\[\d+,\s*\d+,\s*\d+,\s*(\d+)\]`, op.shapes, 1)[0]
}

# head_dim_note suggests the head dimensions the flash kernels are tuned
# for, unless the op already has one of them.
head_dim_note(op) := "" if head_dim(op) in {64, 128}
else := ", a head dimension of 64 or 128"

# fix is the rule doc's variant for the cause; split-KV attention has no
# snippet of its own, the tile advice (batch more work) is the default.
fix := "unfused-attention" if cause_kind(worst) == "unfused-attention"
else := "fused-attention" if cause_kind(worst) == "fused-attention"
else := "misaligned" if cause_kind(worst) == "misaligned"
else := "library" if cause_kind(worst) == "library"
else := "default"

finding contains f if {
	input.gpu_busy_ratio >= params.min_busy
	low_share >= params.min_share
	impact > 0
	op := worst
	f := {
		"msg": sprintf("The GPU is busy %s %s, but %s of its kernel time runs below %s of the roofline: %s %s (%s, %s) takes %s of kernel time at %s of the %s peak (%s of %s on %s, %s-bound); likely cause: %s", [
			lib.pct(input.gpu_busy_ratio), lib.of_time, lib.pct(low_share), lib.pct(params.max_ratio),
			kind_name[op.kind], op.name, shapes(op), op.dtype, lib.pct(op.kernel_share), lib.pct(op.peak_ratio), op.peak_dtype,
			tflops(op.flops_per_s), tflops(op.peak_flops_per_s), input.device_peak.name, op.bound, cause(op),
		]),
		"impact": impact,
		"severity": lib.severity(impact, "high"),
		"fix": fix,
		"evidence": [
			{"name": "gpu_busy_ratio", "value": input.gpu_busy_ratio, "unit": "ratio"},
			{"name": "low_efficiency_kernel_share", "value": low_share, "unit": "ratio"},
			{"name": "op_peak_ratio", "value": op.peak_ratio, "unit": "ratio"},
			{"name": "op_roofline_ratio", "value": op.roofline_ratio, "unit": "ratio"},
			{"name": "target_ratio", "value": target(op), "unit": "ratio"},
			{"name": "kernel_roofline_ratio", "value": input.kernel_roofline_ratio, "unit": "ratio"},
		],
	}
}
