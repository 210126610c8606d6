// Package factstest holds test support shared by the facts and CLI tests:
// locating ../shared/traces and comparing facts with REFERENCE.json.
package factstest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// SharedTraces returns the shared trace folder (../shared/traces beside the
// checkout), or skips the test, saying so, when it is absent.
func SharedTraces(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	dir, _ := filepath.Abs(filepath.Join(root, "..", "shared", "traces"))
	if _, err := os.Stat(filepath.Join(dir, "REFERENCE.json")); err != nil {
		t.Skipf("skipping: shared traces not found at %s (they live beside the checkout in ../shared/traces)", dir)
	}
	return dir
}

// SharedTraceFiles returns the shared trace folder and every trace file
// under it (.json and .json.gz, not REFERENCE*), in walk order; it skips
// the test, saying so, when the folder is absent.
func SharedTraceFiles(t testing.TB) (string, []string) {
	dir := SharedTraces(t)
	var paths []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) && !strings.HasPrefix(d.Name(), "REFERENCE") {
			paths = append(paths, p)
		}
		return nil
	})
	return dir, paths
}

// Reference loads REFERENCE.json: trace path under the shared folder ->
// fact name -> expected value (JSON-decoded). A trace whose facts are all
// null is not a Kineto trace and must be rejected.
func Reference(t testing.TB, dir string) (map[string]map[string]any, []string) {
	raw, err := os.ReadFile(filepath.Join(dir, "REFERENCE.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]map[string]any
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("parse REFERENCE.json: %v", err)
	}
	names := make([]string, 0, len(ref))
	for k := range ref {
		names = append(names, k)
	}
	sort.Strings(names)
	return ref, names
}

// Rejected reports whether the reference marks the trace as not a trace.
func Rejected(want map[string]any) bool {
	for _, v := range want {
		if v != nil {
			return false
		}
	}
	return true
}

// Compare checks got (facts as decoded JSON) against want: ratios and
// step_time_cv within 0.005, microsecond and per-step figures within 1 ns,
// counts and flags exactly, nulls as nulls. It reports every mismatch.
func Compare(t testing.TB, want, got map[string]any) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: fact missing", k)
			continue
		}
		if msg := compare(k, want[k], g); msg != "" {
			t.Errorf("%s: %s", k, msg)
		}
	}
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
