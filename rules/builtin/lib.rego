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
