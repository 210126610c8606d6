package tracetest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and sample traces in testdata/")

// TestSampleTraces keeps testdata/traces/*.pt.trace.json equal to what the
// scenarios generate; -update rewrites them.
func TestSampleTraces(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "traces")
	for name, gen := range Scenarios {
		path := filepath.Join(dir, name+".pt.trace.json")
		got := gen().JSON()
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./... -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test ./... -update", path)
		}
	}
}
