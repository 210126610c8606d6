package tracetest

import (
	"fmt"
	"io"
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
	Cached(tb, path, func(w io.Writer) error {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = Repeat(w, in, mb<<20)
		return err
	})
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, st.Size()
}

// Cached makes path with write unless it exists: written to a temporary
// file beside it, then renamed, so an interrupted run leaves no partial
// input behind.
func Cached(tb testing.TB, path string, write func(io.Writer) error) {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	out, err := os.CreateTemp(filepath.Dir(path), "stepdoctor-bench-*.tmp")
	if err != nil {
		tb.Fatal(err)
	}
	err = write(out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), path)
	}
	if err != nil {
		os.Remove(out.Name())
		tb.Fatalf("write %s: %v", path, err)
	}
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
