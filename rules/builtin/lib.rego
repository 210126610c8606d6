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
