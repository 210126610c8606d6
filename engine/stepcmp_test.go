package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// analyzeBuilder writes b to a temp file and analyzes it.
func analyzeBuilder(t *testing.T, name string, b *tracetest.Builder) *Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(context.Background(), Options{Paths: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stepsTrace is a GPU trace whose steps take durs (us): each step launches
// one kernel covering most of it. batch > 0 records an input of that batch.
func stepsTrace(durs []float64, batch int) *tracetest.Builder {
	b := tracetest.New()
	ts := 0.0
	for k, d := range durs {
		b.Step(k+1, ts, d)
		if batch > 0 {
			b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": b.Pid, "tid": b.Tid,
				"ts": ts + 1, "dur": 2, "args": map[string]any{"Input Dims": [][]int{{batch, 3, 224, 224}}}})
		}
		b.Launch(ts+5, 5, "gemm_kernel", ts+12, d-20)
		ts += d
	}
	return b
}

// TestStepComparisonOutliers: one slow outlier step on each side (the
// first step's warm-up before, a stall after) leaves the 1.4x speed-up
// visible; the mean and the spread of all steps (the old comparison) would
// have called it noise.
func TestStepComparisonOutliers(t *testing.T) {
	before := []float64{300_000, 100_000, 101_000, 99_000, 100_500, 99_500}
	after := []float64{71_000, 70_000, 69_500, 250_000, 70_500, 70_000}
	d := Diff(analyzeBuilder(t, "before.json", stepsTrace(before, 0)), analyzeBuilder(t, "after.json", stepsTrace(after, 0)))
	c := d.Pairs[0].Steps
	if c == nil || c.Verdict != VerdictFaster || c.Before.Steps != 6 || c.After.Steps != 6 {
		t.Fatalf("comparison %+v", c)
	}
	if f := c.Factor(); f < 1.38 || f > 1.46 {
		t.Errorf("speed-up %.3f, want about 1.43 (medians 100 ms -> 70 ms)", f)
	}
	if c.Band > 0.1 {
		t.Errorf("band %.3f: the outliers inflated the noise", c.Band)
	}
	// Mirrored: the same amount, slower.
	back := Diff(analyzeBuilder(t, "after.json", stepsTrace(after, 0)), analyzeBuilder(t, "before.json", stepsTrace(before, 0))).Pairs[0].Steps
	if back.Verdict != VerdictSlower || !near(back.LogRatio, -c.LogRatio) || !near(back.Band, c.Band) {
		t.Errorf("reversed %+v, want the mirror of %+v", back, c)
	}
}

// TestStepComparisonSymmetric: swapping the sides flips the sign of the
// log ratio and the verdict, and keeps the band, for faster, noise and
// too-few cases.
func TestStepComparisonSymmetric(t *testing.T) {
	mirror := map[string]string{VerdictFaster: VerdictSlower, VerdictSlower: VerdictFaster, VerdictNoise: VerdictNoise, VerdictTooFew: VerdictTooFew}
	for _, c := range []struct {
		b, a []float64
		want string
	}{
		{spread(200_000, 0.03, 10), spread(150_000, 0.10, 7), VerdictFaster},
		{spread(200_000, 0.30, 5), spread(195_000, 0.30, 6), VerdictNoise},
		{[]float64{200_000, 210_000}, spread(100_000, 0.01, 6), VerdictTooFew},
	} {
		x := Diff(diffSide(c.b, 0.5), diffSide(c.a, 0.5)).Pairs[0]
		y := Diff(diffSide(c.a, 0.5), diffSide(c.b, 0.5)).Pairs[0]
		if x.Steps.Verdict != c.want || y.Steps.Verdict != mirror[c.want] {
			t.Errorf("%v -> %v: verdicts %q / %q, want %q mirrored", c.b, c.a, x.Steps.Verdict, y.Steps.Verdict, c.want)
		}
		if !near(x.Steps.LogRatio, -y.Steps.LogRatio) || !near(x.Steps.Band, y.Steps.Band) || !near(*x.SpeedUp**y.SpeedUp, 1) {
			t.Errorf("not mirrored: %+v vs %+v", x.Steps, y.Steps)
		}
		if x.Steps.Before.Steps != len(c.b) || x.Steps.After.Steps != len(c.a) {
			t.Errorf("step counts %d, %d", x.Steps.Before.Steps, x.Steps.After.Steps)
		}
	}
}

// TestStepComparisonPerSample: a pair that differs only in batch size (4
// -> 16 samples, steps 2x longer) is compared per sample: 2x faster, not
// 2x slower.
func TestStepComparisonPerSample(t *testing.T) {
	d := Diff(analyzeBuilder(t, "b4.json", stepsTrace(spread(10_000, 0.01, 5), 4)), analyzeBuilder(t, "b16.json", stepsTrace(spread(20_000, 0.01, 5), 16)))
	c := d.Pairs[0].Steps
	if !c.PerSample || *c.Before.BatchSize != 4 || *c.After.BatchSize != 16 || c.Verdict != VerdictFaster || math.Abs(c.SpeedUp-2) > 0.05 {
		t.Fatalf("per-sample comparison %+v", c)
	}
	// Per-sample regressions gate too: 16 -> 4 is 2x slower per sample.
	back := Diff(analyzeBuilder(t, "b16.json", stepsTrace(spread(20_000, 0.01, 5), 16)), analyzeBuilder(t, "b4.json", stepsTrace(spread(10_000, 0.01, 5), 4)))
	if regs := back.Regressions(nil, 0.1); len(regs) != 1 || regs[0].Fact != StepTimeGate+" per sample" {
		t.Errorf("regressions %v", regs)
	}
	// Same batch: compared per step.
	same := Diff(analyzeBuilder(t, "a.json", stepsTrace(spread(10_000, 0.01, 5), 8)), analyzeBuilder(t, "b.json", stepsTrace(spread(20_000, 0.01, 5), 8)))
	if c := same.Pairs[0].Steps; c.PerSample || c.Verdict != VerdictSlower {
		t.Errorf("same batch: %+v", c)
	}
}

// TestDiffWarnsOnDifferentSetups: traces from different GPUs, ranks,
// world sizes and profiler options carry warnings; identical setups none.
func TestDiffWarnsOnDifferentSetups(t *testing.T) {
	a100 := stepsTrace(spread(10_000, 0.01, 5), 0).Top("distributedInfo", map[string]any{"rank": 3, "world_size": 8})
	v100 := stepsTrace(spread(16_000, 0.01, 5), 8).Top("distributedInfo", map[string]any{"rank": 1, "world_size": 4}).
		Top("deviceProperties", []any{map[string]any{"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048, "computeMajor": 7, "computeMinor": 0, "numSms": 80}})
	p := Diff(analyzeBuilder(t, "a100.json", a100), analyzeBuilder(t, "v100.json", v100)).Pairs[0]
	all := strings.Join(p.Warnings, "\n")
	for _, want := range []string{"different devices: NVIDIA A100-SXM4-80GB → Tesla V100-SXM2-32GB", "different ranks: 3 → 1", "different world sizes: 8 → 4", "record_shapes off → on"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", p.Warnings, want)
		}
	}
	if p := Diff(analyzeBuilder(t, "x.json", a100), analyzeBuilder(t, "y.json", a100)).Pairs[0]; len(p.Warnings) != 0 {
		t.Errorf("same setup warns: %q", p.Warnings)
	}
}

// TestEveryRegressionLeafGates: each name --regression-fact accepts
// (facts.RegressionLeaves) appears among the diff's facts and gates when it
// gets 50% worse; names the catalogue gives no direction never gate.
func TestEveryRegressionLeafGates(t *testing.T) {
	side := func(leaf string, v float64) *Result {
		name, field, nested := strings.Cut(leaf, ".")
		var val any = v
		if nested {
			val = map[string]any{field: v}
		}
		raw, _ := json.Marshal(map[string]any{name: val})
		f := &facts.Facts{}
		if err := json.Unmarshal(raw, f); err != nil {
			t.Fatalf("%s: %v", leaf, err)
		}
		return &Result{Traces: []*TraceResult{{Input: Input{Path: "t.json"}, Facts: f}}}
	}
	for _, leaf := range facts.RegressionLeaves() {
		def, _ := facts.LookupLeaf(leaf)
		good, bad := 10.0, 15.0
		if def.Direction == facts.HigherBetter {
			good, bad = 10, 5
		}
		regs := Diff(side(leaf, good), side(leaf, bad)).Regressions([]string{leaf}, 0.1)
		if len(regs) != 1 || regs[0].Fact != leaf {
			t.Errorf("--regression-fact %s does not gate: %v", leaf, regs)
		}
	}
	if regs := Diff(side("kernel_launches_per_ms", 10), side("kernel_launches_per_ms", 30)).Regressions([]string{"kernel_launches_per_ms"}, 0.1); len(regs) != 0 {
		t.Errorf("a neutral fact gated: %v", regs)
	}
}

// TestDiffResNetPair: on the shared 2020 ResNet50 pair (num_workers 0 ->
// 4) diff says faster with the DataLoader finding resolved; reversed,
// slower by the mirrored amount with the finding new.
func TestDiffResNetPair(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "traces", "kineto", "tb_plugin", "samples")
	w0, w4 := filepath.Join(dir, "resnet50_num_workers_0"), filepath.Join(dir, "resnet50_num_workers_4")
	if _, err := os.Stat(w0); err != nil {
		t.Skipf("shared traces not available (%v); skipping the ResNet50 pair", err)
	}
	res := func(p string) *Result {
		r, err := Analyze(context.Background(), Options{Paths: []string{p}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	b, a := res(w0), res(w4)
	fwd, back := Diff(b, a).Pairs[0], Diff(a, b).Pairs[0]
	if fwd.Steps.Verdict != VerdictFaster || back.Steps.Verdict != VerdictSlower {
		t.Fatalf("verdicts %q / %q", fwd.Steps.Verdict, back.Steps.Verdict)
	}
	if !near(fwd.Steps.LogRatio, -back.Steps.LogRatio) || !near(fwd.Noise, back.Noise) {
		t.Errorf("not mirrored: %+v / %+v", fwd.Steps, back.Steps)
	}
	has := func(fs []FindingDelta, id string) bool {
		for _, f := range fs {
			if f.Rule == id {
				return true
			}
		}
		return false
	}
	if !has(fwd.Resolved, "dataloader-bound") || !has(back.New, "dataloader-bound") {
		t.Errorf("dataloader-bound: resolved %v, new when reversed %v", fwd.Resolved, back.New)
	}
	if fwd.Steps.Before.Steps != 6 || fwd.Steps.After.Steps != 6 || len(fwd.Warnings) != 0 {
		t.Errorf("steps %d / %d, warnings %q", fwd.Steps.Before.Steps, fwd.Steps.After.Steps, fwd.Warnings)
	}
}
