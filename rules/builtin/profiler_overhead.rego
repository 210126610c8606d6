# METADATA
# title: Profiler options that distort step timing
# description: |
#   **Why it matters.** `profile_memory=True` records every allocation and
#   `with_stack=True` walks the Python stack at every op: both add host overhead
#   to each op, so a trace recorded with them overstates CPU time and launch
#   gaps. Use them in a separate run when you need memory or source lines, not in
#   the run whose step time you measure.
#
#   **Fix.**
#
#   ```python
#   with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
#                schedule=schedule(wait=1, warmup=1, active=3),
#                on_trace_ready=tensorboard_trace_handler("./log")) as prof:   # timing run
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `profile(...)` with the literal
#   `profile_memory=True` or `with_stack=True`.
#
#   **Impact estimate.** 0: the setup does not slow training, it makes the measurement wrong or missing; the finding ranks below every performance finding.
# custom:
#   id: profiler-overhead
#   severity: low
#   category: script
#   requires: [profilers]
#   confidence: likely
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.profile
#     - https://pytorch.org/tutorials/intermediate/tensorboard_profiler_tutorial.html
package stepdoctor.rules.profiler_overhead

import rego.v1

import data.stepdoctor.lib.script as slib

finding contains f if {
	some p in input.profilers
	opts := [o | some o in ["profile_memory", "with_stack"]; slib.literal(p[o], true)]
	count(opts) > 0
	f := {
		"msg": sprintf("profile(...) sets %s: extra host work per op inflates the measured step time", [concat(" and ", [sprintf("%s=True", [o]) | some o in opts])]),
		"impact": 0,
		"location": slib.loc(p),
	}
}
