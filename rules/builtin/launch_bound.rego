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
#   The rule fires when at least half the kernels are short
#   (`short_kernel_ratio >= 0.5`; "short" is the facts' 10 us threshold),
#   the GPU is idle at least 20% of the window, and the host paces the GPU:
#   either launches are dense (`kernel_launches_per_ms >= 20`, one kernel
#   every 50 us or faster on average) or at least half the kernels took no
#   longer than their own launch call (`launch_bound_kernel_ratio >= 0.5`,
#   then the finding is confirmed; otherwise it is likely). It stays quiet
#   when most kernels are replayed from a CUDA/HIP Graph
#   (`graph_launched_kernel_ratio >= 0.5`): those already skip per-kernel
#   launches, and the advice below would not apply.
#
#   **How to confirm.** In the trace viewer, zoom into a step: the GPU
#   stream shows many thin kernels separated by gaps, while the CPU thread
#   is a solid wall of `aten::` ops and `cudaLaunchKernel` calls. Nsight
#   Systems shows the same as a CUDA API row that is always busy above a
#   sparse kernel row.
#
#   **Fix.** Launch fewer, larger kernels, or replay them without the host:
#
#   ```python
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
#   Also prefer fused implementations (`torch.optim.AdamW(..., fused=True)`
#   or `foreach=True`, `F.scaled_dot_product_attention`).
#
#   **Impact estimate.** `gpu_idle_ratio x short_kernel_ratio`: the share of
#   GPU idle time attributed to gaps between short kernels, which CUDA
#   Graphs or fusion remove. The rest of the idle time has other causes.
# custom:
#   id: launch-bound
#   severity: high
#   category: host-overhead
#   requires: [short_kernel_ratio, kernel_launches_per_ms, gpu_idle_ratio]
#   examples: short_kernel
#   params:
#     min_short_kernel_ratio: 0.5
#     min_launches_per_ms: 20
#     min_idle_ratio: 0.2
#     confirm_launch_bound_ratio: 0.5
#     max_graph_ratio: 0.5
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-cuda-graphs
#     - https://pytorch.org/docs/stable/generated/torch.compile.html
#     - https://hta.readthedocs.io/en/latest/source/features/kernel_breakdown.html
#     - https://docs.nvidia.com/nsight-systems/UserGuide/index.html
package stepdoctor.rules.launch_bound

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["launch-bound"]

confirmed if input.launch_bound_kernel_ratio >= params.confirm_launch_bound_ratio

confidence := "confirmed" if confirmed
else := "likely"

launch_note := sprintf("; %s%% of kernels ran no longer than their launch call", [lib.fixed(input.launch_bound_kernel_ratio * 100, 0)]) if {
	input.launch_bound_kernel_ratio != null
} else := ""

# Launches are the bottleneck when they are dense, or when most kernels
# finish no later than the call that launched them.
host_paced if input.kernel_launches_per_ms >= params.min_launches_per_ms

host_paced if confirmed

# Kernels replayed from a CUDA/HIP Graph already skip per-kernel launches.
graph_replayed if input.graph_launched_kernel_ratio >= params.max_graph_ratio

finding contains f if {
	short := input.short_kernel_ratio
	density := input.kernel_launches_per_ms
	idle := input.gpu_idle_ratio
	short >= params.min_short_kernel_ratio
	idle >= params.min_idle_ratio
	host_paced
	not graph_replayed
	f := {
		"msg": sprintf("%s of kernels run under 10 us at %s launches/ms while the GPU is idle %s of step time%s", [lib.pct(short), lib.fixed(density, 1), lib.pct(idle), launch_note]),
		"impact": idle * short,
		"confidence": confidence,
		"evidence": [
			{"name": "short_kernel_ratio", "value": short, "unit": "ratio"},
			{"name": "kernel_launches_per_ms", "value": density, "unit": "per_ms"},
			{"name": "gpu_idle_ratio", "value": idle, "unit": "ratio"},
		],
	}
}
