# METADATA
# title: GPU waits on kernel launches
# description: |
#   **Why it matters.** Every PyTorch op costs the host a few to tens of
#   microseconds (Python, dispatcher, `cudaLaunchKernel`). When most kernels
#   finish in under 10 us, the GPU completes each one before the host has
#   queued the next: the GPU sits idle between tiny kernels and the step
#   time is set by the CPU's launch rate, not by the GPU. This is typical of
#   small models, small batches, and long chains of elementwise ops.
#
#   The rule looks for that pattern: at least `min_kernels` (50) kernels in
#   the window, so the gaps form a pattern rather than a one-off; at least
#   half of them short (`short_kernel_ratio >= 0.5`, "short" being the
#   facts' 10 us); and evidence that the host paces the GPU: launches are
#   dense (`kernel_launches_per_ms >= 10`, one kernel per 100 us or faster)
#   or at least half the kernels took no longer than their own launch call
#   (`launch_bound_kernel_ratio >= 0.5`; then the finding is confirmed,
#   otherwise likely). It stays quiet when most kernels are replayed from a
#   CUDA/HIP Graph (`graph_launched_kernel_ratio >= 0.5`): those already
#   skip per-kernel launches. It fires when the GPU is idle at least 5% of
#   the time while the host issues work. Thresholds are stepdoctor
#   defaults; HTA's kernel breakdown and Nsight Systems' GPU gaps rule
#   (`gpu_gaps`) show the same gaps.
#
#   **How to confirm.** In the trace viewer, zoom into a step: the GPU
#   stream shows many thin kernels separated by gaps, while the CPU thread
#   is a solid wall of `aten::` ops and `cudaLaunchKernel` calls
#   (`hipLaunchKernel` on ROCm). Nsight Systems (rocprofv3 or rocprof-sys on
#   ROCm) shows the same as a runtime API row that is always busy above a
#   sparse kernel row.
#
#   **Fix.** Launch fewer, larger kernels, or replay them without the host:
#
#   ```python variant=default
#   # 1) Fuse ops and cut launch overhead with the compiler
#   model = torch.compile(model, mode="reduce-overhead")  # uses CUDA Graphs
#
#   # 2) Or capture a static step in a CUDA Graph yourself
#   g = torch.cuda.CUDAGraph()
#   static_x = torch.empty_like(example_x)
#   with torch.cuda.graph(g):
#       static_y = model(static_x)
#   for x in batches:
#       static_x.copy_(x)
#       g.replay()
#
#   # 3) Or give each kernel more work: a larger batch size
#   ```
#
#   For inference (no backward pass), capture the forward once and replay
#   it; serving engines have a switch for it:
#
#   ```python variant=inference
#   model.eval()
#   model = torch.compile(model, mode="reduce-overhead")  # CUDA/HIP Graphs under the hood
#   with torch.inference_mode():
#       out = model(x)                                   # fixed shapes replay one graph
#   # vLLM: keep CUDA graphs on (do not pass enforce_eager=True)
#   # SGLang: do not pass --disable-cuda-graph
#   ```
#
#   A serving engine's iterations (vLLM's `execute_context_...` or SGLang's
#   step spans mark the window) are captured by the engine itself: its
#   switches decide which batches replay from CUDA Graphs, and a batch of
#   more tokens than the largest captured size runs eagerly, one launch per
#   kernel:
#
#   ```python variant=serving
#   # vLLM: keep CUDA graphs on (no enforce_eager=True) and capture the batch sizes you serve
#   llm = LLM(model=name, compilation_config={"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]})
#   # SGLang: do not pass --disable-cuda-graph; --cuda-graph-max-bs raises the largest captured batch
#   # profile decode iterations as well as prefill: a long prefill is the step graphs cover least
#   ```
#
#   Already compiled (`compiled_kernel_ratio` at least half): the compiler
#   fused what it could; add graph capture and remove graph breaks (the
#   message gives the compiled frames and recompilations the trace shows):
#
#   ```python variant=compiled
#   model = torch.compile(model, mode="reduce-overhead")  # adds CUDA/HIP Graphs to the fused kernels
#   # find graph breaks and recompilations that fall back to eager launches:
#   #   TORCH_LOGS="graph_breaks,recompiles" python train.py
#   ```
#
#   Compiled, but the compiled regions launch only eager aten kernels, no
#   Inductor (`triton_`) kernel (`triton_kernel_ratio` 0 with
#   `compiled_kernel_ratio` at least half): the backend generates no code
#   (`backend="aot_eager"` or `"eager"`, debugging backends), so nothing
#   is fused and every op still launches on its own:
#
#   ```python variant=no-codegen
#   # model = torch.compile(model, backend="aot_eager")   # <- generates no kernels
#   model = torch.compile(model)   # the default backend, Inductor, fuses
#   # then, with static shapes, add graph replay:
#   # model = torch.compile(model, mode="reduce-overhead")
#   ```
#
#   On a GPU older than Volta (compute capability below 7.0, such as
#   Pascal's P100 or GTX 10x0), Inductor cannot generate its Triton
#   kernels, so `torch.compile`'s default backend and `mode="reduce-overhead"`
#   do not apply; replay the step from CUDA Graphs, which need no Triton:
#
#   ```python variant=no-triton
#   # 1) graph the model's forward and backward (static shapes; warm-up is done for you)
#   model = torch.cuda.make_graphed_callables(model, (sample_x,))
#   # 2) or let Dynamo capture CUDA Graphs without Inductor
#   model = torch.compile(model, backend="cudagraphs")
#   # 3) or give each kernel more work: a larger batch size
#   ```
#
#   ```python variant=no-triton-inference
#   model.eval()
#   static_x = torch.empty_like(example_x)
#   s = torch.cuda.Stream()
#   s.wait_stream(torch.cuda.current_stream())
#   with torch.inference_mode():
#       with torch.cuda.stream(s):
#           for _ in range(3):
#               model(static_x)                  # warm up before the capture
#       torch.cuda.current_stream().wait_stream(s)
#       g = torch.cuda.CUDAGraph()
#       with torch.cuda.graph(g):
#           static_y = model(static_x)
#       for x in batches:
#           static_x.copy_(x)
#           g.replay()                           # static_y holds the output
#   # or: model = torch.compile(model, backend="cudagraphs")
#   ```
#
#   A training step that waits on the device many times
#   (`device_sync_per_step` at least `max_graph_syncs`, 8: `.item()`,
#   `.cpu()`, blocking copies, data-dependent shapes) cannot be captured
#   whole: a CUDA Graph does not capture a host sync, and torch.compile
#   breaks its graph at each one. Remove the syncs first, then fuse:
#
#   ```python variant=syncs
#   # 1) find every op that makes the host wait for the GPU
#   torch.cuda.set_sync_debug_mode("warn")   # warns at each syncing op; "error" raises
#   # keep values on the GPU (a running loss tensor, read every N steps), size
#   # outputs ahead instead of nonzero() / masked_select / boolean indexing, pass
#   # lengths the host already knows, copy from pinned memory with non_blocking=True
#   # 2) then fuse the ops between the syncs that remain (fewer launches, less
#   #    per-op host work); graph replay once no sync is left in the step
#   model = torch.compile(model)
#   # 3) or give each kernel more work: a larger batch size
#   ```
#
#   Also prefer fused implementations: `F.scaled_dot_product_attention`
#   for attention and, when training, a fused or multi-tensor optimizer
#   (`torch.optim.AdamW(..., fused=True)`, `foreach=True`).
#
#   **Impact estimate.** The GPU idle time spent while the launching thread
#   was in the launch call, runtime calls, CPU operators or Python frames
#   (`gpu_idle_launch_ratio + gpu_idle_runtime_ratio + gpu_idle_cpu_op_ratio
#   + gpu_idle_python_ratio`, `lib.host_issue_idle`): the time the GPU waits
#   for the host to issue the next kernel, which CUDA Graphs or fusion
#   remove. Idle time in the DataLoader, in syncs, in the optimizer or with
#   nothing recorded belongs to other rules. The parts that allocator-churn
#   and repeated-small-op already claim are subtracted, so no two rules
#   count the same time. Added to it: the launch latency
#   (`gpu_idle_queued_latency_ratio`), the GPU idle before kernels that
#   start within 50 us of their launch call returning: the per-kernel
#   dispatch cost (a median 14 us on an MI300X against under 2 us on an
#   H100 in the shared BERT traces), which a graph replay also removes and
#   which idle-gap-queued leaves out.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
#
#   **Relation to idle-gap-launch.** Both measure the same idle share. This
#   rule owns it when the kernels show the tiny-kernel pattern above;
#   idle-gap-launch reports it otherwise (big kernels behind slow host
#   work, or graph replays), never both.
# custom:
#   id: launch-bound
#   severity: high
#   category: host-overhead
#   requires: [has_gpu, kernel_count, short_kernel_ratio, kernel_launches_per_ms, gpu_idle_launch_ratio, gpu_idle_cpu_op_ratio]
#   examples: short_kernel
#   params:
#     min_kernels: 50
#     min_short_kernel_ratio: 0.5
#     min_launches_per_ms: 10
#     min_idle_ratio: 0.05
#     confirm_launch_bound_ratio: 0.5
#     max_graph_ratio: 0.5
#     max_graph_syncs: 8
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
#     - https://pytorch.org/docs/stable/generated/torch.compile.html
#     - https://hta.readthedocs.io/en/latest/source/features/kernel_breakdown.html
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html#expert-systems-analysis
package stepdoctor.rules.launch_bound

import rego.v1

import data.stepdoctor.lib
import data.stepdoctor.rules.allocator_churn
import data.stepdoctor.rules.repeated_small_op

params := data.stepdoctor.params["launch-bound"]

confirmed if input.launch_bound_kernel_ratio >= params.confirm_launch_bound_ratio

confidence := "confirmed" if confirmed
else := "likely"

# The host paces the GPU when launches are dense, or when most kernels
# finish no later than the call that launched them.
host_paced if input.kernel_launches_per_ms >= params.min_launches_per_ms

host_paced if confirmed

# Kernels replayed from a CUDA/HIP Graph already skip per-kernel launches.
graph_replayed if input.graph_launched_kernel_ratio >= params.max_graph_ratio

# claims: the trace shows the tiny-kernel pattern, so this rule (not
# idle-gap-launch) owns the GPU idle time spent while the host issues work.
claims if {
	input.kernel_count >= params.min_kernels
	input.short_kernel_ratio >= params.min_short_kernel_ratio
	host_paced
	not graph_replayed
}

host_idle := lib.host_issue_idle - allocator_churn.claim

latency := lib.num(input.gpu_idle_queued_latency_ratio)

impact := max([0, host_idle - repeated_small_op.claim]) + latency

# The median launch delay is quoted only when it is a latency (within the
# 50 us the latency share counts); a larger median is kernels queued
# behind earlier work, which this share leaves out.
latency_note := sprintf("; kernels also wait %s %s between their launch returning and their start (launch latency, a median %s a kernel)", [lib.pct(latency), lib.of_time, lib.dur(input.launch_delay_us.p50)]) if {
	latency > 0
	input.launch_delay_us != null
	input.launch_delay_us.p50 <= 50
} else := sprintf("; kernels also wait %s %s between their launch returning and their start (launch latency)", [lib.pct(latency), lib.of_time]) if {
	latency > 0
} else := ""

culprit_note := concat("", ["; the GPU waits most on ", lib.host_issue_culprits(3), lib.ddp_broadcast_note]) if {
	lib.host_issue_culprits(3) != ""
} else := ""


compiled_note := lib.compile_note if lib.compiled
else := "; the compiled regions launch only eager aten kernels, no Triton kernel: the compile backend generates no code (aot_eager or eager), so nothing is fused" if lib.generated_nothing
else := ""

launch_note := sprintf("; %s%% of kernels ran no longer than their launch call", [lib.fixed(input.launch_bound_kernel_ratio * 100, 0)]) if {
	input.launch_bound_kernel_ratio != null
} else := ""

fix := "no-triton-inference" if {
	lib.triton_unsupported
	lib.inference
} else := "no-triton" if lib.triton_unsupported
else := "serving" if lib.serving_engine
else := "no-codegen" if lib.generated_nothing
else := "compiled" if lib.compiled
else := "inference" if lib.inference
else := "syncs" if many_syncs
else := "default"

# many_syncs: the step waits on the device too often to be captured whole.
many_syncs if input.device_sync_per_step >= params.max_graph_syncs

sync_note := sprintf("; the step also waits on the device %s times (%s), and a CUDA Graph cannot capture a host sync: remove them first (torch.cuda.set_sync_debug_mode(\"warn\") finds them)", [lib.fixed(input.device_sync_per_step, 0), sync_names]) if {
	many_syncs
	not lib.inference
	not lib.compiled
} else := ""

sync_names := concat(", ", [c.name | some c in array.slice(input.queued_sync_culprits, 0, 3)]) if {
	input.queued_sync_culprits != null
	count(input.queued_sync_culprits) > 0
} else := ".item(), .cpu() or blocking copies"

triton_note := concat("", [lib.triton_note, ": replay the step from CUDA Graphs instead (torch.cuda.graph, torch.cuda.make_graphed_callables, or torch.compile(backend=\"cudagraphs\"), which needs no Triton)"]) if lib.triton_unsupported
else := ""

finding contains f if {
	claims
	host_idle >= params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s while the host issues work (%s in launch and runtime calls, %s in CPU operators, %s in Python): %d kernels, %s of them under 10 us, %s launches/ms%s%s%s%s%s%s%s", [
			lib.pct(host_idle), lib.of_time,
			lib.pct((lib.num(input.gpu_idle_launch_ratio) + lib.num(input.gpu_idle_runtime_ratio)) - allocator_churn.claim), lib.pct(lib.cpu_op_issue_idle), lib.pct(lib.num(input.gpu_idle_python_ratio)),
			input.kernel_count, lib.pct(input.short_kernel_ratio),
			lib.fixed(input.kernel_launches_per_ms, 1), launch_note, latency_note, culprit_note, compiled_note, triton_note, sync_note, lib.slow_host_note,
		]),
		"impact": impact,
		"fix": fix,
		"confidence": confidence,
		"severity": lib.severity(impact, "high"),
		"evidence": [
			{"name": "gpu_idle_queued_latency_ratio", "value": input.gpu_idle_queued_latency_ratio, "unit": "ratio"},
			{"name": "gpu_idle_launch_ratio", "value": input.gpu_idle_launch_ratio, "unit": "ratio"},
			{"name": "gpu_idle_cpu_op_ratio", "value": input.gpu_idle_cpu_op_ratio, "unit": "ratio"},
			{"name": "kernel_count", "value": input.kernel_count, "unit": "count"},
			{"name": "short_kernel_ratio", "value": input.short_kernel_ratio, "unit": "ratio"},
			{"name": "kernel_launches_per_ms", "value": input.kernel_launches_per_ms, "unit": "per_ms"},
			{"name": "launch_bound_kernel_ratio", "value": input.launch_bound_kernel_ratio, "unit": "ratio"},
		],
	}
}
