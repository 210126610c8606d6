package trace_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// benchFile returns a benchmark input of at least mb MiB (see
// tracetest.BenchFile).
func benchFile(b *testing.B, mb int64) (string, int64) {
	return tracetest.BenchFile(b, filepath.Join("..", "..", "..", "shared", "traces"), mb)
}

func sizes() []int64 {
	if os.Getenv("STEPDOCTOR_BENCH_2GB") != "" {
		return []int64{20, 200, 2048}
	}
	return []int64{20, 200}
}

func benchRead(b *testing.B, withFacts bool) {
	for _, mb := range sizes() {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path, size := benchFile(b, mb)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			defer tracetest.ReportCPU(b, size, tracetest.CPUTime())
			for i := 0; i < b.N; i++ {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				t, err := trace.Parse(f, path)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if withFacts {
					facts.Derive(t, facts.DefaultConfig())
				}
			}
		})
	}
}

// BenchmarkParse measures the reader alone (MB/s of uncompressed JSON).
func BenchmarkParse(b *testing.B) { benchRead(b, false) }

// BenchmarkParseFacts measures reader plus facts.Derive.
func BenchmarkParseFacts(b *testing.B) { benchRead(b, true) }

// BenchmarkEncodingJSON decodes the same files with encoding/json into
// generic events, the baseline the reader is compared against.
func BenchmarkEncodingJSON(b *testing.B) {
	for _, mb := range sizes() {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path, size := benchFile(b, mb)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			defer tracetest.ReportCPU(b, size, tracetest.CPUTime())
			for i := 0; i < b.N; i++ {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				var doc struct {
					TraceEvents []map[string]any `json:"traceEvents"`
				}
				err = json.NewDecoder(f).Decode(&doc)
				f.Close()
				if err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseGzip measures the reader on gzip input; SetBytes counts
// uncompressed bytes, so MB/s compares with BenchmarkParse.
func BenchmarkParseGzip(b *testing.B) {
	for _, mb := range sizes() {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path, size := benchFile(b, mb)
			gzPath := path + ".gz"
			if _, err := os.Stat(gzPath); err != nil {
				in, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				out, err := os.Create(gzPath + ".tmp")
				if err != nil {
					b.Fatal(err)
				}
				zw := gzip.NewWriter(out)
				if _, err := io.Copy(zw, in); err != nil {
					b.Fatal(err)
				}
				zw.Close()
				out.Close()
				in.Close()
				if err := os.Rename(gzPath+".tmp", gzPath); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			defer tracetest.ReportCPU(b, size, tracetest.CPUTime())
			for i := 0; i < b.N; i++ {
				f, err := os.Open(gzPath)
				if err != nil {
					b.Fatal(err)
				}
				_, err = trace.Parse(f, gzPath)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
