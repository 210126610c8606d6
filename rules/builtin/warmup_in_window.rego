# METADATA
# title: Start-up inside the profiled window
# description: |
#   **Why it matters.** One-off calls (CUDA/HIP context creation, lazy
#   loading of a kernel's module on its first launch, the allocator's first
#   `cudaMalloc`/`cudaFree`, stream and event creation, cuDNN or MIOpen autotuning)
#   ran inside the profiled window. They happen once per process, not once
#   per step, so the window measures start-up instead of training: every
#   per-step figure is distorted, and advice built on them (launch-bound,
#   CUDA Graphs) would chase time that is not spent in the steady state.
#
#   The first call of an operator can be such a call too: the first
#   `aten::to` to the GPU allocating through the caching allocator, the
#   first convolution autotuning under `cudnn.benchmark`.
#
#   **How to confirm.** The culprits named in the finding are single calls
#   tens of times longer than the other calls of their name, all in one
#   step; the trace viewer shows them as long bars at the start.
#
#   **Fix.** Profile steady-state steps only, after a warm-up:
#
#   ```python variant=default
#   with torch.profiler.profile(
#           schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
#           on_trace_ready=torch.profiler.tensorboard_trace_handler("./log")) as prof:
#       for step, batch in enumerate(loader):
#           train_step(batch)
#           prof.step()
#   ```
#
#   For inference (no backward pass), run a few forwards, or send a few
#   requests to a serving engine, before the profiler starts:
#
#   ```python variant=inference
#   model.eval()
#   with torch.inference_mode():
#       for _ in range(3):
#           model(example_x)            # context, lazy kernel loading, autotuning, graph capture
#       torch.cuda.synchronize()
#       with torch.profiler.profile() as prof:
#           for x in batches:
#               model(x)
#   # vLLM: generate a few warm-up prompts, then llm.start_profile() ... llm.stop_profile()
#   # SGLang: send warm-up requests, then POST /start_profile ... /stop_profile
#   ```
#
#   Or run a few iterations before starting the profiler. With
#   `CUDA_MODULE_LOADING=LAZY` (the default since CUDA 11.7), and ROCm's
#   deferred code-object loading (`HIP_ENABLE_DEFERRED_LOADING`, on by
#   default), a kernel's code loads on its first launch, so first launches
#   are slow wherever they happen: warm every code path (training and
#   evaluation) first.
#
#   **Impact estimate.** The GPU idle charged to one-off runtime calls
#   (`gpu_idle_warmup_ratio`) and to operators inside one-off operator
#   calls (`gpu_idle_cpu_op_oneoff_ratio`, which launch-bound and
#   idle-gap-launch leave out): time of the profiled window, not per-step
#   savings; it says how much of the measurement is start-up.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: warmup-in-window
#   severity: high
#   category: profiling-setup
#   requires: [has_gpu, kernel_count, gpu_idle_warmup_ratio, warmup_ratio]
#   examples: idle_warmup
#   params:
#     min_ratio: 0.05
#     min_kernels: 10
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.schedule
#     - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#lazy-loading
#     - https://pytorch.org/tutorials/recipes/recipes/profiler_recipe.html
package stepdoctor.rules.warmup_in_window

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["warmup-in-window"]

window := "of the profiled steps" if input.has_steps
else := "of the profiled window"

names := sprintf(": %s", [lib.once_culprits("warmup", 3)]) if input.idle_culprits.warmup[0]
else := ""

oneoff_ops := lib.num(input.gpu_idle_cpu_op_oneoff_ratio)

# context_calls are calls that, as the process's first CUDA/HIP call,
# create the device context (a query that needs the context, or the
# driver's init): named as such, since as a culprit "cudaDeviceGetStreamPriorityRange"
# reads as a stream-priority problem.
context_calls := {
	"cudaDeviceGetStreamPriorityRange", "cudaGetDeviceCount", "cudaGetDeviceProperties", "cudaSetDevice",
	"cuInit", "cuDevicePrimaryCtxRetain",
	"hipDeviceGetStreamPriorityRange", "hipGetDeviceCount", "hipGetDeviceProperties", "hipSetDevice", "hipInit",
}

# (10 ms or more: context creation takes 100 ms to seconds).
context_note := sprintf("; %s of %s is device context creation (the process's first CUDA/HIP call initialises the driver and the context)", [lib.dur(c.idle_us), c.name]) if {
	some c in input.idle_culprits.warmup
	c.name in context_calls
	c.idle_us >= 10000
} else := ""

op_names := sprintf(": %s", [lib.once_culprits("cpu_op_oneoff", 3)]) if input.idle_culprits.cpu_op_oneoff[0]
else := ""

ops := "operator calls (set-up: a first call, model construction)"

# lead says what the one-off calls took; when only operators had one-off
# calls, it names those.
lead := sprintf("One-off start-up calls take %s %s and keep the GPU idle %s of it%s", [
	lib.pct(input.warmup_ratio), window, lib.pct(input.gpu_idle_warmup_ratio), names,
]) if {
	input.warmup_ratio >= 0.0005
} else := sprintf("One-off %s, far slower than their other calls, keep the GPU idle %s %s%s", [ops, lib.pct(oneoff_ops), window, op_names])

ops_note := sprintf("; one-off %s keep it idle %s more%s", [ops, lib.pct(oneoff_ops), op_names]) if {
	input.warmup_ratio >= 0.0005
	oneoff_ops >= 0.0005
} else := ""

# advice says how to leave the start-up out: a training schedule, or
# warm-up forwards or requests for inference.
advice := "profile after a few warm-up forwards or requests (run them, then start the profiler)" if lib.inference
else := "profile steady-state steps (schedule(wait=1, warmup=1, active=3))"

fix := "inference" if lib.inference
else := "default"

# A trace of a handful of kernels is a snippet, not a profiled run: its
# first launch is all there is.
finding contains f if {
	input.kernel_count >= params.min_kernels
	impact := input.gpu_idle_warmup_ratio + oneoff_ops
	max([impact, input.warmup_ratio]) >= params.min_ratio
	f := {
		"msg": sprintf("%s%s%s. This is set-up inside the window, not a per-step cost: %s", [lead, context_note, ops_note, advice]),
		"impact": impact,
		"severity": lib.severity(impact, "high"),
		"fix": fix,
		"evidence": [
			{"name": "warmup_ratio", "value": input.warmup_ratio, "unit": "ratio"},
			{"name": "gpu_idle_warmup_ratio", "value": input.gpu_idle_warmup_ratio, "unit": "ratio"},
			{"name": "gpu_idle_cpu_op_oneoff_ratio", "value": input.gpu_idle_cpu_op_oneoff_ratio, "unit": "ratio"},
		],
	}
}
