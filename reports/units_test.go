package reports

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/rules"
)

// TestUnitsFromCatalogue: reports take a fact's unit from its catalogue
// entry, not from its name. trace_bytes_per_step once showed as
// "10746677.00 / step" because its name ends in _per_step.
func TestUnitsFromCatalogue(t *testing.T) {
	f := &facts.Facts{TraceBytesPerStep: f64(10746677), MemoryGrowthBytesPerStep: f64(2048), StepTimeCV: f64(0.25)}
	got := map[string]string{}
	for _, row := range factRows(f) {
		got[row.Name] = row.Value
	}
	for name, want := range map[string]string{
		"trace_bytes_per_step":         "10.25 MiB / step",
		"memory_growth_bytes_per_step": "2.00 KiB / step",
		"step_time_cv":                 "25.0%",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	// Evidence a rule filled from its requires carries the catalogue unit.
	fd := buildFinding(1, rules.Finding{Rule: "r", Evidence: []rules.Evidence{{Name: "trace_bytes_per_step", Value: 10746677, Unit: string(facts.UnitOf("trace_bytes_per_step"))}}})
	if fd.Evidence[0].Value != "10.25 MiB / step" {
		t.Errorf("evidence %q", fd.Evidence[0].Value)
	}
}

// TestDiffLabelsFollowDirection: a rise of CUDA-Graph-launched kernels is
// better, and a rate per millisecond is neither better nor worse.
func TestDiffLabelsFollowDirection(t *testing.T) {
	side := func(graph, perMS float64) *engine.Result {
		f := &facts.Facts{GraphLaunchedKernelRatio: &graph, KernelLaunchesPerMS: &perMS}
		return &engine.Result{Traces: []*engine.TraceResult{{Input: engine.Input{Path: "t.json"}, Facts: f}}}
	}
	md := diffMarkdown(engine.Diff(side(0.2, 10), side(0.8, 20)), false)
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.Contains(line, "graph_launched_kernel_ratio") && !strings.Contains(line, "(better)"):
			t.Errorf("more graph-launched kernels must read better: %s", line)
		case strings.Contains(line, "kernel_launches_per_ms") && (strings.Contains(line, "(worse)") || strings.Contains(line, "(better)")):
			t.Errorf("a launch rate is neutral: %s", line)
		}
	}
	if !strings.Contains(md, "graph_launched_kernel_ratio") || !strings.Contains(md, "kernel_launches_per_ms") {
		t.Errorf("diff lacks the facts:\n%s", md)
	}
}
