package rules

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// exprRule is goodExpr with its impact replaced, always firing.
func exprRule(impact string) string {
	r := strings.Replace(goodExpr, `impact: "0.01"`, "impact: "+quoteYAML(impact), 1)
	return strings.Replace(r, "when: memcpy_per_step > params.max_per_step", "when: memcpy_per_step >= 0", 1)
}

func quoteYAML(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func evalExpr(t *testing.T, impact string, timeout time.Duration) error {
	t.Helper()
	s, err := Load(writeRules(t, map[string]string{"bomb.yaml": exprRule(impact)}))
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.With(Config{Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Evaluate(context.Background(), gpuFacts())
	return err
}

// TestExprBombsAreBounded: expressions that ask expr for gigabytes end
// with a clear error, having allocated little.
func TestExprBombsAreBounded(t *testing.T) {
	for _, tt := range []struct{ name, impact, want string }{
		// 1e4 x 1e5 bytes: 1 GB on an unbounded replace (the case is 1e5 x 1e5).
		{"replace", `len(replace(repeat("a", 1e4), "a", repeat("a", 1e5))) > 0 ? 0.01 : 0`, "replace would build more than"},
		{"issue replace", `len(replace(repeat("a", 1e5), "a", repeat("a", 1e5))) > 0 ? 0.01 : 0`, "replace would build more than"},
		{"repeat", `len(repeat(repeat("a", 1e6), 1000)) > 0 ? 0.01 : 0`, "repeat would build more than"},
		{"concat doubling", `len(reduce(1..40, #acc + #acc, "ab")) > 0 ? 0.01 : 0`, "string + would build more than"},
		{"let doubling", `let a = repeat("x", 1e6); let b = a + a; let c = b + b; let d = c + c; let e = d + d; len(e + e) > 0 ? 0.01 : 0`, "string + would build more than"},
		{"join of copies", `let s = repeat("a", 1e6); len(join(map(1..1000, s))) > 0 ? 0.01 : 0`, "join would build more than"},
		{"upper in a loop", `let s = repeat("a", 1e5); len(map(1..1000, upper(s))) > 0 ? 0.01 : 0`, "upper would build more than"},
		{"sprintf width", `len(sprintf("%[1]999999d%[1]999999d", 1)) > 0 ? 0.01 : 0`, "width or precision over"},
		{"sprintf repeats", `len(sprintf(repeat("%[1]v", 1e5), repeat("a", 1e4))) > 0 ? 0.01 : 0`, "sprintf would build more than"},
		{"fixed decimals", `len(fixed(1, 1000000000)) > 0 ? 0.01 : 0`, "decimals is outside"},
		{"concat arrays", `let a = map(1..100000, #); len(concat(a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a)) > 0 ? 0.01 : 0`, "concat would build more than"},
		{"string of copies", `let s = repeat("a", 1e5); len(string(map(1..1000, s))) > 0 ? 0.01 : 0`, "string would build more than"},
		{"range", `len(1..100000000) > 0 ? 0.01 : 0`, "elements in one expression"},
		{"nested loops", `let a = map(1..1000, #); all(a, all(a, all(a, true))) ? 0.01 : 0`, "iterate at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := evalExpr(t, tt.impact, MaxTimeout)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "evaluate rule team-many-memcpy") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
				t.Errorf("evaluation allocated %d MB", grew>>20)
			}
		})
	}
}

// TestExprTimeoutStopsTheRule: a rule past its timeout has stopped when
// Evaluate returns, so it does not run beside the next rule or rank.
func TestExprTimeoutStopsTheRule(t *testing.T) {
	// about 1e6 steps of arithmetic per outer iteration: far over 1ms and
	// building nothing, so only the timeout can end it (string building
	// would hit the size budget first on a fast machine).
	err := evalExpr(t, `let a = map(1..900, #); any(a, any(a, # * 3 + 1 < 0)) ? 0.01 : 0`, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "timed out after 1ms") {
		t.Fatalf("got %v, want a timeout", err)
	}
	if n := exprRunning.Load(); n != 0 {
		t.Errorf("%d expr evaluations still running after Evaluate returned", n)
	}
}

// TestExprBoundedBuiltinsStillWork: the bounded versions behave like
// expr's own.
func TestExprBoundedBuiltinsStillWork(t *testing.T) {
	for _, impact := range []string{
		`repeat("ab", 3) == "ababab" ? 0.01 : 0`,
		`replace("aXbX", "X", "yy") == "ayybyy" && replace("aXbX", "X", "", 1) == "abX" ? 0.01 : 0`,
		`join(["a", "b"], "-") == "a-b" && join(split("a,b,c", ",")) == "abc" ? 0.01 : 0`,
		`upper("ab") + lower("CD") == "ABcd" && string(12) == "12" ? 0.01 : 0`,
		`len(concat([1], [2, 3])) == 3 && len(flatten([[1], [2, [3]]])) == 3 && sort([3, 1])[0] == 1 ? 0.01 : 0`,
		`sum(map(1..4, # + 1)) == 14 && reduce(1..3, #acc + #, 0) == 6 ? 0.01 : 0`,
		`("a" matches "^a") && (memcpy_per_step + 1 > 0) && sprintf("%.1f", 1.25) == "1.2" ? 0.01 : 0`,
		`fixed(0.123, 2) == "0.12" && pct(0.5) == "50.0%" ? 0.01 : 0`,
	} {
		s, err := Load(writeRules(t, map[string]string{"ok.yaml": exprRule(impact)}))
		if err != nil {
			t.Fatal(err)
		}
		fs, _, err := s.Evaluate(context.Background(), gpuFacts())
		fired := false
		for _, f := range fs {
			fired = fired || f.Rule == "team-many-memcpy" && f.Impact == 0.01
		}
		if err != nil || !fired {
			t.Errorf("%s: error %v, fired %v; want it to fire with impact 0.01", impact, err, fired)
		}
	}
}

func TestExprReservedAndDisabledNames(t *testing.T) {
	for impact, want := range map[string]string{
		`stepdoctor_run == nil ? 0.01 : 0`:  "reserved",
		`len(toJSON([1])) > 0 ? 0.01 : 0`:   "toJSON",
		`timezone("UTC") != nil ? 0.01 : 0`: "timezone",
	} {
		_, err := Load(writeRules(t, map[string]string{"r.yaml": exprRule(impact)}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a load error with %q", impact, err, want)
		}
	}
}
