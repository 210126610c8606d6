package tracetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchSource is the shared real trace (ResNet50, num_workers=0, one
// V100) that benchmark inputs repeat.
const BenchSource = "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"

// BenchFile returns the path and size of a trace of at least mb MiB built
// by Repeat from BenchSource, cached in the temp dir between runs. shared
// is the path of the shared traces directory; the benchmark is skipped,
// saying so, when the source is absent.
func BenchFile(tb testing.TB, shared string, mb int64) (string, int64) {
	tb.Helper()
	src := filepath.Join(shared, BenchSource)
	if _, err := os.Stat(src); err != nil {
		tb.Skipf("skipping: %s not found (shared traces live in ../shared/traces)", src)
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("stepdoctor-bench-%dmb.json", mb))
	if st, err := os.Stat(path); err == nil {
		return path, st.Size()
	}
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.CreateTemp(os.TempDir(), "stepdoctor-bench-*.tmp")
	if err != nil {
		tb.Fatal(err)
	}
	n, err := Repeat(out, in, mb<<20)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), path)
	}
	if err != nil {
		os.Remove(out.Name())
		tb.Fatal(err)
	}
	return path, n
}

// ReportCPU adds the MB/cpu-s metric to a benchmark: its bytes (1e6 per
// MB, as b.SetBytes's MB/s) per second of process CPU time since start.
// The throughput goal is stated in it; MB/s is wall-clock.
func ReportCPU(b *testing.B, bytes int64, start time.Duration) {
	used := CPUTime() - start
	if used <= 0 { // CPU time unknown on this OS
		return
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/used.Seconds(), "MB/cpu-s")
}
