# METADATA
# title: Median step slower than the team's budget
# description: |
#   **Why it matters.** Our training jobs are sized for a median step of
#   `max_step_ms` milliseconds; slower steps mean the run misses its
#   schedule. This is an example team rule: copy it, change the id and the
#   budget in `.stepdoctor.yaml` (`params: {team-step-slo: {max_step_ms: 250}}`).
#
#   **How to confirm.** The report's step time table (p50).
#
#   **Fix.** Work through the other findings, highest impact first.
#
#   **Impact estimate.** The share of the median step above the budget.
# custom:
#   id: team-step-slo
#   severity: medium
#   category: host-overhead
#   requires: [has_steps, step_time_us]
#   params:
#     max_step_ms: 100
#   references:
#     - https://pytorch.org/docs/stable/profiler.html
package stepdoctor.rules.team_step_slo

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["team-step-slo"]

finding contains f if {
	p50_ms := input.step_time_us.p50 / 1000
	p50_ms > params.max_step_ms
	over := (p50_ms - params.max_step_ms) / p50_ms
	f := {
		"msg": sprintf("The median step takes %s ms, over the team budget of %s ms", [lib.fixed(p50_ms, 1), lib.fixed(params.max_step_ms, 0)]),
		"impact": over,
		"severity": lib.severity(over, "medium"),
		"evidence": [{"name": "step_time_p50_us", "value": input.step_time_us.p50, "unit": "us"}],
	}
}
