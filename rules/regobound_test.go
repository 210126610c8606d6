package rules

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// evalRego loads a Rego team rule whose finding body is body and
// evaluates it on gpuFacts with the longest timeout a config may set.
func evalRego(t *testing.T, body string) error {
	t.Helper()
	_, err := evalRegoFindings(t, body)
	return err
}

func evalRegoFindings(t *testing.T, body string) ([]Finding, error) {
	t.Helper()
	s, err := Load(writeRules(t, map[string]string{"bomb.rego": regoRule("team-bomb", body)}))
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.With(Config{Timeout: MaxTimeout}); err != nil {
		t.Fatal(err)
	}
	fs, _, err := s.Evaluate(context.Background(), gpuFacts())
	return fs, err
}

// TestRegoBombsAreBounded: built-ins through which a Rego rule asks for
// gigabytes at once end the rule with a clear error, having allocated
// little (without the bounds, the first case asks for 100 GB in one
// allocation and the Go runtime ends the process).
func TestRegoBombsAreBounded(t *testing.T) {
	const tail = "\n\tf := {\"msg\": \"x\", \"impact\": 0}"
	for _, tt := range []struct{ name, body, want string }{
		{"concat with a long delimiter", `	input.gpu_idle_ratio >= 0
	s := concat("", [x | some x in ["a", "b"]; true])
	d := sprintf("%0999d", [1])
	big := concat(d, [s | some _ in numbers.range(1, 100000)])
	huge := concat(big, [s | some _ in numbers.range(1, 100000)])
	count(huge) > 0`, "would build more than the 16 MiB"},
		{"sprintf width", `	input.gpu_idle_ratio >= 0
	s := sprintf("%0999999d", [1])
	count(s) > 0`, "width or precision over 1000"},
		{"replace blow-up", `	input.gpu_idle_ratio >= 0
	d := sprintf("%0999d", [1])
	s := concat("", [d | some _ in numbers.range(1, 1000)])
	t := replace(s, "0", s)
	count(t) > 0`, "replace: would build more than"},
		{"replace_n blow-up", `	input.gpu_idle_ratio >= 0
	d := sprintf("%0999d", [1])
	s := concat("", [d | some _ in numbers.range(1, 1000)])
	t := strings.replace_n({"0": s}, s)
	count(t) > 0`, "strings.replace_n: would build more than"},
		{"regex.replace blow-up", `	input.gpu_idle_ratio >= 0
	d := sprintf("%0999d", [1])
	s := concat("", [d | some _ in numbers.range(1, 1000)])
	t := regex.replace(s, "0", s)
	count(t) > 0`, "regex.replace: would build more than"},
		{"range", `	input.gpu_idle_ratio >= 0
	xs := numbers.range(1, 300000000)
	count(xs) > 0`, "numbers.range: would build more than"},
		{"range_step", `	input.gpu_idle_ratio >= 0
	xs := numbers.range_step(1, 300000000, 1)
	count(xs) > 0`, "numbers.range_step: would build more than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := evalRego(t, tt.body+tail)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "evaluate rule team-bomb") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
				t.Errorf("evaluation allocated %d MB", grew>>20)
			}
		})
	}
}

// TestRegoBoundedBuiltinsStillWork: the bounded built-ins give OPA's
// results, and many small strings in one evaluation stay within budget.
func TestRegoBoundedBuiltinsStillWork(t *testing.T) {
	fs, err := evalRegoFindings(t, `	input.gpu_idle_ratio >= 0
	sprintf("%d-%s", [3, "a"]) == "3-a"
	concat(",", ["a", "b"]) == "a,b"
	replace("aXbX", "X", "yy") == "ayybyy"
	strings.replace_n({"a": "b", "c": "d"}, "ac") == "bd"
	regex.replace("a1b2", "[0-9]", "#") == "a#b#"
	numbers.range(1, 3) == [1, 2, 3]
	numbers.range_step(1, 10, 4) == [1, 5, 9]
	msgs := [sprintf("kernel %d took %s", [i, "a long enough name for a kernel"]) | some i in numbers.range(1, 20000)]
	count(msgs) == 20000
	f := {"msg": "ok", "impact": 0.01}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Rule == "team-bomb" {
			return
		}
	}
	t.Fatal("the rule did not fire: a bounded built-in gave another result than OPA's")
}

// TestFindingSeverityIsCapped: a rule's severity is the most its findings
// get; a finding asking for more is given the rule's, one asking for less
// keeps its own.
func TestFindingSeverityIsCapped(t *testing.T) {
	for _, tt := range []struct{ asked, want Severity }{{"high", "low"}, {"info", "info"}} {
		fs, err := evalRegoFindings(t, `	input.gpu_idle_ratio >= 0
	f := {"msg": "x", "impact": 0.01, "severity": "`+string(tt.asked)+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range fs {
			if f.Rule == "team-bomb" {
				found = true
				if f.Severity != tt.want {
					t.Errorf("rule severity low, finding asked %s: got %s, want %s", tt.asked, f.Severity, tt.want)
				}
			}
		}
		if !found {
			t.Fatalf("the rule did not fire (asked %s)", tt.asked)
		}
	}
}
