package engine

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/rules"
)

// diffSide is one run whose steps take durs (us).
func diffSide(durs []float64, idle float64, rulesFired ...string) *Result {
	f := &facts.Facts{StepsCount: len(durs), GPUIdleRatio: &idle, LastStepDrainUS: ptr(0.0)}
	var sum float64
	for _, d := range durs {
		f.Steps = append(f.Steps, facts.StepBreakdown{DurUS: d})
		sum += d
	}
	f.StepTimeUS = &facts.StepStats{Mean: sum / float64(len(durs)), P50: sum / float64(len(durs))}
	tr := &TraceResult{Input: Input{Path: "t.json"}, Facts: f}
	for _, r := range rulesFired {
		tr.Findings = append(tr.Findings, rules.Finding{Rule: r, Impact: 0.2})
	}
	return &Result{Traces: []*TraceResult{tr}}
}

// spread returns n durations around mean, deterministic, within ±rel.
func spread(mean, rel float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + rel*float64(i%5-2)/2)
	}
	return out
}

func TestDiffSpeedUpNoiseFindings(t *testing.T) {
	// 200 ms -> 160 ms with steps within ±3%: a real 1.25x speed-up; idle
	// 0.50 -> 0.499 is noise.
	d := Diff(diffSide(spread(200_000, 0.03, 10), 0.50, "dataloader-bound", "launch-bound"), diffSide(spread(160_000, 0.02, 10), 0.499, "launch-bound", "amp-not-used"))
	p := d.Pairs[0]
	if p.SpeedUp == nil || !near(*p.SpeedUp, 1.25) || p.Steps.Verdict != VerdictFaster || !p.NoiseMeasured {
		t.Fatalf("speed-up %v noise %v steps %+v", p.SpeedUp, p.Noise, p.Steps)
	}
	got := map[string]FactDelta{}
	for _, fd := range p.Facts {
		got[fd.Name] = fd
	}
	if m := got["step_time_us.mean"]; m.Noise || m.Worse || !near(*m.Rel, -0.2) {
		t.Errorf("step time delta %+v", m)
	}
	if g := got["gpu_idle_ratio"]; !g.Noise {
		t.Errorf("idle change of 0.2%% must be noise: %+v", g)
	}
	if len(p.Resolved) != 1 || p.Resolved[0].Rule != "dataloader-bound" || len(p.New) != 1 || p.New[0].Rule != "amp-not-used" || len(p.Unchanged) != 1 {
		t.Errorf("resolved %v new %v unchanged %v", p.Resolved, p.New, p.Unchanged)
	}
	// The reverse change is a 25% regression of the median step time.
	back := Diff(diffSide(spread(160_000, 0.02, 10), 0.49), diffSide(spread(200_000, 0.03, 10), 0.50))
	regs := back.Regressions(nil, 0.10)
	if len(regs) != 1 || regs[0].Fact != StepTimeGate || !near(regs[0].Change, 0.25) {
		t.Errorf("regressions %v", regs)
	}
	if regs := back.Regressions(nil, 0.30); len(regs) != 0 {
		t.Errorf("25%% is within a 30%% bound: %v", regs)
	}
	// A slowdown within the noise is not a regression.
	noisy := Diff(diffSide(spread(200_000, 0.20, 5), 0.5), diffSide(spread(210_000, 0.20, 5), 0.5))
	if p := noisy.Pairs[0]; p.Steps.Verdict != VerdictNoise {
		t.Errorf("5%% slower with ±20%% steps: %+v", p.Steps)
	}
	if regs := noisy.Regressions([]string{"step_time_us.mean"}, 0.01); len(regs) != 0 {
		t.Errorf("5%% slower with ±20%% steps is noise: %v", regs)
	}
}

func TestDiffPairsByRank(t *testing.T) {
	r := func(v int64) *int64 { return &v }
	b := &Result{Traces: []*TraceResult{{Input: Input{Path: "b0"}, Rank: r(0), Facts: &facts.Facts{}}, {Input: Input{Path: "b1"}, Rank: r(1), Facts: &facts.Facts{}}}}
	a := &Result{Traces: []*TraceResult{{Input: Input{Path: "a1"}, Rank: r(1), Facts: &facts.Facts{}}, {Input: Input{Path: "a2"}, Rank: r(2), Facts: &facts.Facts{}}}}
	d := Diff(b, a)
	if len(d.Pairs) != 1 || d.Pairs[0].Before.Path != "b1" || len(d.Unpaired) != 2 {
		t.Errorf("pairs %+v unpaired %v", d.Pairs, d.Unpaired)
	}
	// Traces without rank identity pair by input order: the pair warns and
	// carries no rank, so no report calls a position in the input a rank.
	io := func(path string, i int64) *TraceResult {
		return &TraceResult{Input: Input{Path: path}, Rank: r(i), RankSource: RankFromInputOrder, Facts: &facts.Facts{}}
	}
	d = Diff(&Result{Traces: []*TraceResult{io("x", 0), io("y", 1)}}, &Result{Traces: []*TraceResult{io("x", 0), io("y", 1)}})
	for _, p := range d.Pairs {
		if p.Rank != nil || len(p.Warnings) == 0 || !strings.HasPrefix(p.Warnings[len(p.Warnings)-1], "paired by input order") {
			t.Errorf("pair %s by input order: rank %v warnings %q", p.Before.Path, p.Rank, p.Warnings)
		}
	}
}

// TestDiffDirection: the catalogue's direction decides Worse. More
// CUDA-Graph-launched kernels is better; a rate per millisecond is neutral
// (it rises when the same work takes less time).
func TestDiffDirection(t *testing.T) {
	side := func(graph, perMS, idle float64) *Result {
		f := &facts.Facts{GraphLaunchedKernelRatio: &graph, KernelLaunchesPerMS: &perMS, GPUIdleRatio: &idle, GPUBusyRatio: ptr(1 - idle)}
		return &Result{Traces: []*TraceResult{{Input: Input{Path: "t.json"}, Facts: f}}}
	}
	got := map[string]FactDelta{}
	for _, fd := range Diff(side(0.2, 10, 0.5), side(0.8, 20, 0.6)).Pairs[0].Facts {
		got[fd.Name] = fd
	}
	for name, worse := range map[string]bool{"graph_launched_kernel_ratio": false, "kernel_launches_per_ms": false, "gpu_idle_ratio": true, "gpu_busy_ratio": true} {
		if fd := got[name]; fd.Abs == nil || fd.Noise || fd.Worse != worse {
			t.Errorf("%s: %+v, want worse=%v", name, fd, worse)
		}
	}
	if regs := Diff(side(0.8, 20, 0.5), side(0.2, 10, 0.5)).Regressions([]string{"graph_launched_kernel_ratio", "kernel_launches_per_ms"}, 0.1); len(regs) != 1 || regs[0].Fact != "graph_launched_kernel_ratio" {
		t.Errorf("fewer graph-launched kernels regress, a lower rate does not: %v", regs)
	}
}

// TestDiffInconclusive: a finding on one side only whose rule failed on
// the other side is neither resolved nor new; an error without a rule id
// stands for every rule; the rule errors of both sides are carried.
func TestDiffInconclusive(t *testing.T) {
	durs := spread(100, 0.01, 10)
	cases := []struct {
		name          string
		before, after []string
		failedBefore  string
		failedAfter   string
		resolved      int
		new           int
		inconclusive  int
	}{
		{"no errors", []string{"x", "y"}, []string{"z"}, "-", "-", 2, 1, 0},
		{"x failed after", []string{"x", "y"}, []string{"z"}, "-", "x", 1, 1, 1},
		{"z failed before", []string{"x"}, []string{"z"}, "z", "-", 1, 0, 1},
		{"all failed after", []string{"x", "y"}, []string{"z"}, "-", "", 0, 1, 2},
	}
	for _, c := range cases {
		b, a := diffSide(durs, 0.1, c.before...), diffSide(durs, 0.1, c.after...)
		b.Traces[0].Input.Path, a.Traces[0].Input.Path = "before.json", "after.json"
		if c.failedBefore != "-" {
			b.RuleErrors = []RuleError{{Trace: "before.json", Rule: c.failedBefore, Message: "boom"}}
		}
		if c.failedAfter != "-" {
			a.RuleErrors = []RuleError{{Trace: "after.json", Rule: c.failedAfter, Message: "boom"}}
		}
		d := Diff(b, a)
		p := d.Pairs[0]
		if len(p.Resolved) != c.resolved || len(p.New) != c.new || len(p.Inconclusive) != c.inconclusive {
			t.Errorf("%s: resolved %d new %d inconclusive %d, want %d %d %d", c.name, len(p.Resolved), len(p.New), len(p.Inconclusive), c.resolved, c.new, c.inconclusive)
		}
		if want := len(b.RuleErrors) + len(a.RuleErrors); len(d.RuleErrors) != want {
			t.Errorf("%s: %d rule errors carried, want %d", c.name, len(d.RuleErrors), want)
		}
	}
}

// TestRegressionsFromZeroAndPerSample: a gated fact that was 0 and grew is
// a regression (from 0 to its value), and with other batch sizes the
// step-time leaves are compared per sample, as the gate is.
func TestRegressionsFromZeroAndPerSample(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b32, b64 := int64(32), int64(64)
	d := &DiffResult{Pairs: []PairDiff{{
		Noise: 0.01,
		Steps: &StepComparison{PerSample: true, Before: StepSide{BatchSize: &b64}, After: StepSide{BatchSize: &b32}},
		Facts: []FactDelta{
			{Name: "sync_per_step", Unit: "per_step", Before: f(0), After: f(3), Abs: f(3), Worse: true},
			// Raw p90 fell 26.0 -> 20.0 ms, but per sample it rose 0.41 -> 0.62 ms.
			{Name: "step_time_us.p90", Unit: "stats_us", Before: f(26000), After: f(20000), Abs: f(-6000), Rel: f(-0.23)},
			{Name: "gpu_idle_ratio", Unit: "ratio", Before: f(0.5), After: f(0.4), Abs: f(-0.1), Rel: f(-0.2)},
		},
	}}}
	regs := d.Regressions([]string{"sync_per_step", "step_time_us.p90", "gpu_idle_ratio"}, 0.1)
	var got []string
	for _, r := range regs {
		got = append(got, r.String())
	}
	want := []string{"sync_per_step regressed from 0 to 3", "step_time_us.p90 per sample regressed 53.8% (406.2 µs → 625.0 µs)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("regressions %q, want %q", got, want)
	}
}

// TestCompareBaseline: the Baseline a report shows carries each pair's
// step comparison and regressions, and names the unpaired traces from the
// baseline's side of view.
func TestCompareBaseline(t *testing.T) {
	r := func(i int64) *int64 { return &i }
	base := diffSide(spread(100, 0.01, 10), 0.1)
	run := diffSide(spread(150, 0.01, 10), 0.1)
	base.Traces[0].Rank, run.Traces[0].Rank = r(0), r(0)
	extra := *base.Traces[0]
	extra.Input.Path, extra.Rank = "base/rank1.json", r(1)
	base.Traces = append(base.Traces, &extra)
	d, regs, b := CompareBaseline(base, run, "base/", nil, 0.1)
	if len(d.Pairs) != 1 || len(regs) != 1 || regs[0].Fact != StepTimeGate {
		t.Fatalf("pairs %d, regressions %+v", len(d.Pairs), regs)
	}
	p := b.Pairs[0]
	if b.Path != "base/" || b.MaxRegression != 0.1 || p.Steps == nil || p.SpeedUp == nil || *p.SpeedUp >= 1 ||
		len(p.Regressions) != 1 || !strings.HasPrefix(p.Regressions[0], "step_time_us.p50 regressed 50.0%") {
		t.Errorf("baseline %+v, pair %+v", b, p)
	}
	if len(b.Unpaired) != 1 || b.Unpaired[0] != "baseline: base/rank1.json" {
		t.Errorf("unpaired %q", b.Unpaired)
	}
}

// A side read from a damaged trace (repaired, or with events dropped) is
// named first among the pair's warnings, with its first repair; a side
// read whole adds none.
func TestDiffWarnsOfDamagedTraces(t *testing.T) {
	before, after := diffSide(spread(200_000, 0.03, 10), 0.5), diffSide(spread(160_000, 0.03, 6), 0.5)
	after.Traces[0].Input.Path = "cut.json"
	after.Traces[0].Health = trace.Health{EventsRead: 300, EventsKept: 299, Repaired: true, Diagnostics: []trace.Diagnostic{
		{Kind: trace.DiagWarning, Reason: "clock_skew", Message: "skew", Offset: -1, Count: 1},
		{Kind: trace.DiagRepair, Reason: "truncated", Message: "input ends inside event 299", Offset: 4096, Count: 1},
	}}
	p := Diff(before, after).Pairs[0]
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "the after trace cut.json was repaired (299 of 300 events kept; first: repair at byte 4096: input ends inside event 299") {
		t.Errorf("warnings %q", p.Warnings)
	}
	if w := Diff(before, before).Pairs[0].Warnings; len(w) != 0 {
		t.Errorf("traces read whole: warnings %q", w)
	}
	before.Traces[0].Health = trace.Health{EventsRead: 10, EventsKept: 8, Dropped: 2, Diagnostics: []trace.Diagnostic{{Kind: trace.DiagDropped, Reason: "negative_dur", Message: "negative duration", Offset: 12, Count: 2}}}
	if w := Diff(before, before).Pairs[0].Warnings; len(w) != 2 || !strings.Contains(w[0], "the before trace t.json was read with events dropped (8 of 10 events kept") {
		t.Errorf("dropped events on both sides: warnings %q", w)
	}
}
