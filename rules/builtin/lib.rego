# Helpers for rule messages, available to every rule (built-in and team) as
# data.stepdoctor.lib: `import data.stepdoctor.lib` then `lib.pct(ratio)`.
# OPA's sprintf passes integral numbers as integers, so "%.1f" of 12 prints
# "%!f(int64=12)"; these helpers format integral and fractional numbers alike.
package stepdoctor.lib

import rego.v1

# fixed(x, n) renders number x with n decimals: fixed(12, 1) == "12.0".
fixed(x, n) := sprintf("%d", [x]) if {
	x == floor(x)
	n == 0
}

fixed(x, n) := concat(".", [sprintf("%d", [x]), concat("", [d | some _ in numbers.range(1, n); d := "0"])]) if {
	x == floor(x)
	n > 0
}

fixed(x, n) := sprintf(concat("", ["%.", format_int(n, 10), "f"]), [x]) if x != floor(x)

# pct(r) renders ratio r (0..1) as a percentage with one decimal: "24.4%".
pct(r) := concat("", [fixed(r * 100, 1), "%"])

# Severity from impact. A finding's severity is the band its impact falls
# in, never above the rule's cap (the severity in its METADATA):
# high when the estimated recoverable share of time is at least 20%,
# medium from 2%, low below 2%. So a finding that measured almost nothing
# never trips --fail-on medium.
band(i) := "high" if i >= 0.2
else := "medium" if i >= 0.02
else := "low"

severity_rank := {"high": 0, "medium": 1, "low": 2, "info": 3}

# severity(impact, cap) is band(impact), lowered to cap when above it.
severity(i, cap) := band(i) if severity_rank[band(i)] >= severity_rank[cap]
else := cap

# of_time names the time ratios are shares of: the profiled steps when the
# trace has ProfilerStep spans, else the whole trace window.
of_time := "of step time" if input.has_steps
else := "of the profiled window"

# num(x) is x, or 0 when x is null (an unknown share claims nothing).
num(x) := x if x != null
else := 0

# gib(b) renders bytes as GiB with one decimal: "12.5 GiB".
gib(b) := concat(" ", [fixed(round((b / 1073741824) * 10) / 10, 1), "GiB"])

# dur(us) formats a duration in microseconds: "850 us", "12.5 ms", "3.3 s".
dur(us) := sprintf("%s us", [fixed(round(us), 0)]) if us < 1000
else := sprintf("%s ms", [fixed(round(us / 100) / 10, 1)]) if us < 1000000
else := sprintf("%s s", [fixed(round(us / 100000) / 10, 1)])

# per_step(us) is " (X per step)" for a time spread over the steps, or "".
per_step(us) := sprintf(", %s per step", [dur(us / input.steps_count)]) if {
	input.has_steps
	input.steps_count > 1
} else := ""

# culprit(c) names one idle culprit (facts idle_culprits entry): its name,
# calls, the GPU idle charged to it, the copy it waited on, its
# record_function scope and the user's Python frame.
culprit(c) := culprit_text(c, per_step(c.idle_us))

# once_culprit(c) is culprit(c) for a one-off cost, which has no share per
# step.
once_culprit(c) := culprit_text(c, "")

culprit_text(c, per) := concat("", [
	c.name,
	sprintf(" (%d %s, %s of GPU idle%s%s)", [c.calls, plural(c.calls, "call", "calls"), dur(c.idle_us), per, one_off_note(c)]),
	copy_note(c),
	scope_note(c),
	site_note(c),
	op_note(c),
])

# one_off_note says when one call holds most of a culprit's idle (facts
# top_idle_us): a first allocation or lazy initialization, which the next
# steps do not repeat, rather than a cost of every call.
one_off_note(c) := sprintf("; one call, at +%s, holds %s of it", [dur(c.examples[0].offset_us), dur(c.top_idle_us)]) if {
	c.calls >= 3
	c.top_idle_us * 2 >= c.idle_us
	c.examples[0]
} else := ""

plural(n, one, many) := one if n == 1
else := many

copy_note(c) := sprintf(", waiting on %s of %d B", [c.copy, c.copy_bytes]) if {
	c.copy
	c.copy_bytes
} else := sprintf(", waiting on %s", [c.copy]) if c.copy
else := ""

scope_note(c) := sprintf(" in %s", [c.scope]) if c.scope
else := ""

site_note(c) := sprintf(" at %s", [c.site]) if c.site
else := ""

# op_note names the operator around a runtime call's longest example (facts
# idle_culprits op) when no Python frame places it: on the backward
# thread, the autograd node.
op_note(c) := sprintf(", the longest under %s in the backward pass", [trim_prefix(c.op, "autograd::engine::evaluate_function: ")]) if {
	not c.site
	startswith(c.op, "autograd::engine::evaluate_function: ")
} else := sprintf(", the longest under %s", [c.op]) if {
	not c.site
	c.op
} else := ""

# top_culprit(cause) is the text of the cause's largest culprit, or "".
top_culprit(cause) := culprit(input.idle_culprits[cause][0]) if input.idle_culprits[cause][0]
else := ""

# once_culprits(cause, n) joins the cause's n largest culprits as one-off
# costs (once_culprit).
once_culprits(cause, n) := concat("; ", [once_culprit(c) |
	some i, c in input.idle_culprits[cause]
	i < n
])

# culprits(cause, n) joins the cause's n largest culprits.
culprits(cause, n) := concat("; ", [culprit(c) |
	some i, c in input.idle_culprits[cause]
	i < n
])

# cpu_op_issue_idle is the GPU idle charged to recorded operators, less
# the part inside one-off operator calls (warm-up: warmup-in-window's).
cpu_op_issue_idle := max([0, num(input.gpu_idle_cpu_op_ratio) - num(input.gpu_idle_cpu_op_oneoff_ratio)])

# host_issue_idle is the GPU idle while the launching thread issues the
# next work: the launch call, recorded operators (but one-off calls) and
# Python frames, and runtime calls other than the allocator's
# (allocator-churn owns those when it fires). Claimed by launch-bound or
# idle-gap-launch.
host_issue_idle := ((num(input.gpu_idle_launch_ratio) + cpu_op_issue_idle) + num(input.gpu_idle_python_ratio)) + num(input.gpu_idle_runtime_ratio)

# Context of the trace, for choosing a fix variant.

# inference: no backward pass and no optimizer step in the trace.
inference if input.has_backward == false

# serving_engine names the serving engine whose iteration spans mark (or
# would mark, with --step-marker auto) the trace's steps: "vllm" or
# "sglang"; undefined for anything else.
serving_engine := e if {
	e := input.step_marker.engine
	e in {"vllm", "sglang"}
} else := e if {
	e := input.step_marker_found.engine
	e in {"vllm", "sglang"}
}

# rocm: an AMD GPU (HIP runtime).
rocm if input.gpu_vendor == "amd"

# cpu_job: no GPU activity and nothing in the trace shows a GPU job
# (gpu_activity_missing: launches, deviceProperties or NCCL collectives
# without GPU events are a GPU job recorded without ProfilerActivity.CUDA,
# whose CPU-side numbers say nothing about a CPU job).
cpu_job if {
	input.has_gpu == false
	not input.gpu_activity_missing
	not other_accelerator
}

# other_accelerator: a device that is neither CUDA nor ROCm (MTIA).
other_accelerator if {
	input.unsupported_accelerator != null
	input.unsupported_accelerator != ""
}

# triton_unsupported: an NVIDIA GPU whose compute capability is known and
# below 7.0 (Pascal and older): Inductor's Triton backend, which
# torch.compile uses by default, cannot generate kernels for it.
triton_unsupported if {
	input.gpu_vendor != "amd"
	input.device.compute_major != null
	input.device.compute_major < 7
}

# triton_note says why a fix does not lead with torch.compile's default
# backend ("" when Triton can target the GPU); rules add the alternative.
triton_note := sprintf("; torch.compile's default Inductor backend generates Triton kernels, which need compute capability 7.0 or newer, and this %s is %d.%d", [input.device.name, input.device.compute_major, num(input.device.compute_minor)]) if {
	triton_unsupported
} else := ""

# compiled: most of the GPU work already runs under torch.compile: at
# least half the compute kernel time is Inductor kernels or launched from
# compiled regions (compiled_kernel_ratio). A trace that merely shows a
# compiled region or one triton_ kernel (an eager model calling one
# compiled helper) is not compiled code. Without kernels (CPU-only), the
# compiled regions cover at least half the window.
compiled if {
	input.compiled_kernel_ratio >= 0.5
	not generated_nothing
}

# generated_nothing: the compiled regions launch only eager aten kernels,
# no Inductor (triton_) kernel: a backend such as aot_eager or a
# torch.compile(backend="eager") debug setting, which fuses nothing.
generated_nothing if {
	input.triton_kernel_ratio == 0
	input.compiled_kernel_ratio >= 0.5
}

compiled if {
	input.compiled_kernel_ratio == null
	input.compiled_region_ratio >= 0.5
}

# A facts file from before these shares: torch_compiled alone.
compiled if {
	input.compiled_kernel_ratio == null
	input.compiled_region_ratio == null
	input.torch_compiled == true
}

# graph_replayed: most kernels are replayed from a CUDA/HIP Graph
# (cudaGraphLaunch / hipGraphLaunch): the code is already captured.
graph_replayed if input.graph_launched_kernel_ratio >= 0.5

# compile_note says what the compiled trace shows of graph breaks and
# recompilations ("" when nothing).
compile_note := sprintf(" (%d compiled frames, %d recompilations in the window: TORCH_LOGS=\"graph_breaks,recompiles\" names them)", [input.compiled_frame_count, input.recompile_count]) if {
	input.compiled_frame_count != null
	input.recompile_count != null
	input.compiled_frame_count + input.recompile_count > 1
} else := ""

# host_issue_culprits(n) joins the n largest culprits of the causes the
# launch rules claim (operators, launch calls, Python frames, runtime calls
# other than the allocator's), most idle first.
host_issue_culprits(n) := concat("; ", [culprit(x[2]) |
	ranked := sort([[0 - c.idle_us, c.name, c] |
		some cause in ["cpu_op", "launch", "python", "runtime"]
		some c in input.idle_culprits[cause]
		not c.allocator
	])
	some k, x in ranked
	k < n
])


# slow_host_note says the host itself is slow when view-only operators
# (metadata, no kernel) take 10 us or more at the median
# (view_op_median_us; about 1 us is usual with the profiler on, so 10x):
# every host-side cost in the trace is inflated by it, which the
# host-bound findings should say before they blame the model.
slow_host_note := sprintf("; the host itself runs slowly: view-only ops (aten::view, as_strided: no kernel) take a median %s us each on the launching thread where 1 us is usual (a few us with an old profiler), so every host-side cost here is inflated: check for CPU contention (other processes on these cores, oversubscribed threads: OMP_NUM_THREADS) or profiler overhead (an old PyTorch, record_shapes / with_stack) before changing the model", [fixed(input.view_op_median_us, 1)]) if {
	input.view_op_median_us >= 10
} else := ""

# ddp_broadcast_note names DDP's per-step buffer broadcast when the GPU
# waits on it (unflatten_dense_tensors / _broadcast_coalesced inside
# DistributedDataParallel.forward).
ddp_broadcast_note := "; the unflatten_dense_tensors in DistributedDataParallel.forward is DDP broadcasting buffers (BatchNorm statistics) every step: DDP(model, broadcast_buffers=False) when they need not be synced" if {
	some c in input.idle_culprits.cpu_op
	c.name in {"aten::unflatten_dense_tensors", "aten::_broadcast_coalesced", "c10d::broadcast_"}
	contains(c.scope, "DistributedDataParallel.forward")
} else := ""

# optimizer_update_ops are the operators a single-tensor optimizer step
# runs per parameter (torch/optim/adam.py, sgd.py, ... _single_tensor_*):
# their repeats and chains are optimizer-foreach's to fix.
optimizer_update_ops := {
	"aten::add_", "aten::mul_", "aten::addcmul_", "aten::addcdiv_", "aten::sqrt", "aten::sqrt_",
	"aten::div", "aten::div_", "aten::lerp_", "aten::sub_", "aten::maximum", "aten::neg", "aten::mul",
	"aten::add", "aten::clamp_", "aten::sign",
}
