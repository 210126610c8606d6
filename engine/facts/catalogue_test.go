package facts_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestCatalogueMatchesFacts keeps the catalogue and the Facts fields that
// rules see (json and expr tags, not "-") equal, in the same order, and
// fails when a field has no complete entry: a known unit that fits the
// field's name and Go type, a definition and a source.
func TestCatalogueMatchesFacts(t *testing.T) {
	var fields []string
	types := map[string]reflect.Type{}
	typ := reflect.TypeOf(facts.Facts{})
	for i := 0; i < typ.NumField(); i++ {
		sf := typ.Field(i)
		if sf.Tag.Get("expr") == "-" {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name != sf.Tag.Get("expr") {
			t.Errorf("field %s: json %q and expr %q differ", sf.Name, name, sf.Tag.Get("expr"))
		}
		fields = append(fields, name)
		types[name] = sf.Type
	}
	var cat []string
	for _, d := range facts.Catalogue {
		cat = append(cat, d.Name)
		if !slices.Contains(facts.Units, d.Unit) || d.Definition == "" || d.Source == "" {
			t.Errorf("catalogue %s: unit %q, definition and source are required", d.Name, d.Unit)
		}
		for suf, unit := range map[string]facts.Unit{"_ratio": facts.UnitRatio, "_count": facts.UnitCount, "_per_ms": facts.UnitPerMS, "_per_step": facts.UnitPerStep, "_bytes": facts.UnitBytes, "_bytes_per_step": facts.UnitBytesPerStep, "_us": facts.UnitUS, "_flops_per_s": facts.UnitFLOPS} {
			if strings.HasSuffix(d.Name, suf) && d.Unit != unit && !strings.HasSuffix(d.Name, "_bytes_per_step") && d.Unit != facts.UnitStatsUS {
				t.Errorf("catalogue %s: unit %s does not match the name", d.Name, d.Unit)
			}
		}
		if ft, ok := types[d.Name]; ok {
			if want := unitKind(ft); !slices.Contains(want, d.Unit) {
				t.Errorf("catalogue %s: unit %s does not fit the field's type %s (want one of %v)", d.Name, d.Unit, ft, want)
			}
		}
		for _, n := range d.Needs {
			if n == "" {
				t.Errorf("catalogue %s: empty need", d.Name)
			}
		}
		if d.Leaves() == nil && d.Direction != facts.Neutral {
			t.Errorf("catalogue %s: a %s fact has no numeric value, so it has no direction", d.Name, d.Unit)
		}
	}
	if strings.Join(fields, ",") != strings.Join(cat, ",") {
		t.Errorf("catalogue and Facts differ:\nfacts:     %v\ncatalogue: %v", fields, cat)
	}
}

// unitKind returns the units a Facts field of type ft may have.
func unitKind(ft reflect.Type) []facts.Unit {
	if ft == nil {
		return nil
	}
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch {
	case ft == reflect.TypeOf(facts.StepStats{}):
		return []facts.Unit{facts.UnitStatsUS}
	case ft.Kind() == reflect.Struct || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map:
		return []facts.Unit{facts.UnitObject}
	case ft.Kind() == reflect.String:
		return []facts.Unit{facts.UnitID}
	case ft.Kind() == reflect.Bool:
		return []facts.Unit{facts.UnitBool}
	case ft.Kind() == reflect.Float64:
		return []facts.Unit{facts.UnitUS, facts.UnitBytes, facts.UnitBytesPerStep, facts.UnitRatio, facts.UnitPerStep, facts.UnitPerMS, facts.UnitCount, facts.UnitFLOPS}
	case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Int64:
		return []facts.Unit{facts.UnitUS, facts.UnitBytes, facts.UnitCount, facts.UnitID}
	}
	return []facts.Unit{}
}

// TestCatalogueLeaves pins leaf names, units and directions the diff, the
// reports and the baseline gate read.
func TestCatalogueLeaves(t *testing.T) {
	d, ok := facts.LookupLeaf("step_time_us.p90")
	if !ok || d.Name != "step_time_us" || d.LeafUnit() != facts.UnitUS || d.Direction != facts.LowerBetter {
		t.Errorf("step_time_us.p90: %+v %v", d, ok)
	}
	for _, notLeaf := range []string{"step_time_us", "step_time_us.p99", "has_gpu", "device", "rank", "nope"} {
		if _, ok := facts.LookupLeaf(notLeaf); ok {
			t.Errorf("%s is not a numeric leaf", notLeaf)
		}
	}
	for name, want := range map[string]facts.Unit{
		"trace_bytes_per_step": facts.UnitBytesPerStep, "memory_growth_bytes_per_step": facts.UnitBytesPerStep,
		"step_time_us": facts.UnitStatsUS, "step_time_us.mean": facts.UnitUS, "steps_count": facts.UnitCount,
		"device.total_memory_bytes": facts.UnitBytes, "device.sm_count": facts.UnitCount, "device.name": "",
	} {
		if got := facts.UnitOf(name); got != want {
			t.Errorf("UnitOf(%s) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]facts.Direction{
		"graph_launched_kernel_ratio": facts.HigherBetter, "gpu_busy_ratio": facts.HigherBetter,
		"kernel_launches_per_ms": facts.Neutral, "gpu_idle_ratio": facts.LowerBetter,
	} {
		if d, _ := facts.Lookup(name); d.Direction != want {
			t.Errorf("%s: direction %v, want %v", name, d.Direction, want)
		}
	}
	leaves := facts.RegressionLeaves()
	if !slices.Contains(leaves, "step_time_us.p90") || slices.Contains(leaves, "step_time_us") || slices.Contains(leaves, "kernel_launches_per_ms") {
		t.Errorf("regression leaves: %v", leaves)
	}
}

// TestCatalogueDoc keeps docs/FACTS.md equal to facts.CatalogueMarkdown();
// -update rewrites it.
func TestCatalogueDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "FACTS.md")
	var buf bytes.Buffer
	facts.CatalogueMarkdown(&buf)
	if *updateFlag {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s is stale: run go test ./engine/facts -update", path)
	}
}
