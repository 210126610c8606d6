# Rego unit tests for team-step-slo, run by `stepdoctor rules test rules/examples`
# (like `opa test`): every test_* rule must be true.
package stepdoctor.rules.team_step_slo_test

import rego.v1

import data.stepdoctor.rules.team_step_slo

test_slow_median_fires if {
	some f in team_step_slo.finding with input as {"has_steps": true, "step_time_us": {"mean": 250000, "p50": 200000, "p90": 300000, "max": 400000}}
	f.impact == 0.5
	f.severity == "medium"
	contains(f.msg, "200.0 ms")
}

test_fast_median_is_quiet if {
	count(team_step_slo.finding) == 0 with input as {"has_steps": true, "step_time_us": {"mean": 50000, "p50": 50000, "p90": 50000, "max": 50000}}
}

test_budget_comes_from_params if {
	count(team_step_slo.finding) == 0 with input as {"has_steps": true, "step_time_us": {"mean": 200000, "p50": 200000, "p90": 200000, "max": 200000}}
		with data.stepdoctor.params["team-step-slo"].max_step_ms as 300
}
