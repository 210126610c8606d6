# METADATA
# title: Profiler schedule never advances
# description: |
#   **Why it matters.** A `schedule` counts steps through `prof.step()`.
#   Without the call the profiler stays in its first (wait) phase: nothing is
#   recorded, `on_trace_ready` never fires, and no trace is written.
#
#   **Fix.** Call `prof.step()` once at the end of every iteration:
#
#   ```python
#   with profile(schedule=schedule(wait=1, warmup=1, active=3),
#                on_trace_ready=tensorboard_trace_handler("./log")) as prof:
#       for batch in loader:
#           train_step(batch)
#           prof.step()
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `profile(schedule=...)` assigned to a name
#   (`as prof` or `prof = ...`) on which `.step()` is never called.
#
#   **Impact estimate.** 0: the setup does not slow training, it makes the measurement wrong or missing; the finding ranks below every performance finding.
# custom:
#   id: profiler-no-step
#   severity: medium
#   category: script
#   requires: [profilers]
#   confidence: likely
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.profile.step
#     - https://pytorch.org/tutorials/intermediate/tensorboard_profiler_tutorial.html
package stepdoctor.rules.profiler_no_step

import rego.v1

import data.stepdoctor.lib.script as slib

finding contains f if {
	some p in input.profilers
	p.schedule.present
	p.var != ""
	not p.calls_step
	f := {
		"msg": sprintf("profile(schedule=...) but %s.step() is never called: the schedule never leaves its wait phase and no trace is written", [p.var]),
		"impact": 0,
		"location": slib.loc(p),
	}
}
