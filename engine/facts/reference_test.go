package facts_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestReference checks every core fact against ../shared/traces/REFERENCE.json,
// computed independently from docs/ARCHITECTURE.md's definitions.
func TestReference(t *testing.T) {
	dir := factstest.SharedTraces(t)
	ref, names := factstest.Reference(t, dir)
	for _, name := range names {
		want := ref[name]
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := trace.Parse(f, name)
			if factstest.Rejected(want) {
				if !errors.Is(err, trace.ErrNotKineto) {
					t.Fatalf("want ErrNotKineto, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(facts.Derive(tr, facts.DefaultConfig()))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			factstest.Compare(t, want, got)
		})
	}
}

// TestReferenceIdle checks the rev-3 idle causes and warmup_ratio against
// ../shared/traces/REFERENCE-idle.json (computed independently from
// docs/ARCHITECTURE.md "Why the GPU waits"), within 0.005, and that the causes
// partition gpu_idle_ratio exactly on every shared trace.
func TestReferenceIdle(t *testing.T) {
	dir := factstest.SharedTraces(t)
	raw, err := os.ReadFile(filepath.Join(dir, "REFERENCE-idle.json"))
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	var ref map[string]map[string]any
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("parse REFERENCE-idle.json: %v", err)
	}
	_, names := factstest.Reference(t, dir)
	for _, name := range names {
		want, ok := ref[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := trace.Parse(f, name)
			if err != nil {
				t.Fatal(err)
			}
			fs := facts.Derive(tr, facts.DefaultConfig())
			b, err := json.Marshal(fs)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			factstest.Compare(t, want, got)
			if fs.GPUIdleRatio == nil {
				return
			}
			sum := 0.0
			for _, c := range fs.IdleCauseRatios() {
				sum += c.Ratio
			}
			if d := sum - *fs.GPUIdleRatio; d > 1e-9 || d < -1e-9 {
				t.Errorf("idle causes sum to %v, gpu_idle_ratio is %v", sum, *fs.GPUIdleRatio)
			}
		})
	}
}
