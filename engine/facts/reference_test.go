package facts_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// sharedTraces returns ../shared/traces relative to the module root, or
// skips the test when it is absent.
func sharedTraces(t testing.TB) string {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "traces"))
	if _, err := os.Stat(filepath.Join(dir, "REFERENCE.json")); err != nil {
		t.Skipf("skipping: shared traces not found at %s (they live beside the checkout in ../shared/traces)", dir)
	}
	return dir
}

// TestReference checks every core fact against REFERENCE.json, computed
// independently from DESIGN.md: ratios within 0.005, counts exactly,
// microsecond figures within 1 ns, nulls as nulls.
func TestReference(t *testing.T) {
	dir := sharedTraces(t)
	raw, err := os.ReadFile(filepath.Join(dir, "REFERENCE.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]map[string]any
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(ref))
	for k := range ref {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		want := ref[name]
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := trace.Parse(f, name)
			if allNull(want) {
				if !errors.Is(err, trace.ErrNotKineto) {
					t.Fatalf("want ErrNotKineto, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := toMap(t, facts.Derive(tr, facts.DefaultConfig()))
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s: fact missing from Facts", k)
					continue
				}
				if msg := compare(k, want[k], g); msg != "" {
					t.Errorf("%s: %s", k, msg)
				}
			}
		})
	}
}

func allNull(m map[string]any) bool {
	for _, v := range m {
		if v != nil {
			return false
		}
	}
	return true
}

func toMap(t *testing.T, f *facts.Facts) map[string]any {
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compare(key string, want, got any) string {
	if (want == nil) != (got == nil) {
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	switch w := want.(type) {
	case nil:
		return ""
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("got %v, want %v", got, want)
		}
		for k, v := range w {
			if msg := compare(key+"."+k, v, g[k]); msg != "" {
				return k + ": " + msg
			}
		}
		return ""
	case float64:
		g, ok := got.(float64)
		if !ok {
			return fmt.Sprintf("got %v, want %v", got, want)
		}
		tol := 0.0
		switch {
		case strings.HasSuffix(key, "_ratio") || key == "step_time_cv":
			tol = 0.005
		case strings.Contains(key, "_us") || strings.HasSuffix(key, "_per_step") || strings.HasSuffix(key, "_per_ms"):
			tol = 1e-3 + 1e-9*math.Abs(w)
		}
		if math.Abs(g-w) > tol {
			return fmt.Sprintf("got %v, want %v", g, w)
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("got %v, want %v", got, want)
		}
		return ""
	}
}
