# METADATA
# title: Profiler result is never saved as a trace
# description: |
#   **Why it matters.** A profile that is only printed
#   (`prof.key_averages().table()`) loses the timeline: GPU idle gaps, step
#   boundaries, copies and syncs. stepdoctor, TensorBoard and Perfetto need the
#   Chrome trace the profiler can write.
#
#   **Fix.**
#
#   ```python
#   with profile(..., on_trace_ready=tensorboard_trace_handler("./log")) as prof:
#       ...
#   # or, after the block:
#   prof.export_chrome_trace("trace.json")
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `profile(...)` without `on_trace_ready=` whose
#   variable never calls `.export_chrome_trace(...)`. Not reported for the legacy
#   `torch.autograd.profiler.profile` in a script that never uses a GPU: it records
#   CPU operators only, and its operator table is the point.
#
#   **Impact estimate.** 0: the setup does not slow training, it makes the measurement wrong or missing; the finding ranks below every performance finding.
# custom:
#   id: profiler-no-export
#   severity: low
#   category: script
#   requires: [profilers, features]
#   confidence: likely
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.tensorboard_trace_handler
#     - https://pytorch.org/tutorials/recipes/recipes/profiler_recipe.html
package stepdoctor.rules.profiler_no_export

import rego.v1

import data.stepdoctor.lib.script as slib

finding contains f if {
	some p in input.profilers
	not p.kwargs_splat
	not p.on_trace_ready.present
	not p.exports_trace
	not cpu_op_table(p)
	f := {
		"msg": "the profile is never written as a trace: add on_trace_ready=tensorboard_trace_handler(dir) or call export_chrome_trace(path)",
		"impact": 0,
		"location": slib.loc(p),
	}
}

# The legacy autograd profiler in a script that never uses a GPU records CPU
# operators only: its product is the operator table, there is no GPU timeline
# to lose.
cpu_op_table(p) if {
	p.name == "torch.autograd.profiler.profile"
	not slib.uses_gpu(input.features)
}
