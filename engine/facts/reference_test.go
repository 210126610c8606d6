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
// computed independently from DESIGN.md's definitions.
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
