# METADATA
# title: Profiler records a whole loop without a schedule
# description: |
#   **Why it matters.** Without `schedule=`, `torch.profiler.profile` records
#   every event of every iteration of the loop it wraps: the trace grows without
#   bound (gigabytes for a long loop), the profiler's overhead slows every step,
#   and the first steps (warm-up, cuDNN autotuning, allocator growth) are
#   mixed in with steady state.
#
#   **Fix.**
#
#   ```python
#   with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
#                schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
#                on_trace_ready=tensorboard_trace_handler("./log")) as prof:
#       for step, batch in enumerate(loader):
#           train_step(batch)
#           prof.step()
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `profile(...)` without `schedule` whose `with`
#   block contains a loop.
#
#   **Impact estimate.** 0: the setup does not slow training, it makes the measurement wrong or missing; the finding ranks below every performance finding.
# custom:
#   id: profiler-no-schedule
#   severity: low
#   category: script
#   requires: [profilers]
#   confidence: likely
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.schedule
#     - https://pytorch.org/tutorials/intermediate/tensorboard_profiler_tutorial.html
package stepdoctor.rules.profiler_no_schedule

import rego.v1

import data.stepdoctor.lib.script as slib

finding contains f if {
	some p in input.profilers
	not p.kwargs_splat
	not p.schedule.present
	p.wraps_loop
	f := {
		"msg": "profile(...) without schedule= records every iteration of the loop it wraps: huge trace, warm-up mixed with steady state",
		"impact": 0,
		"location": slib.loc(p),
	}
}
