package trace_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// benchFile returns a benchmark input of at least mb MiB (see
// tracetest.BenchFile).
func benchFile(b *testing.B, mb int64) (string, int64) {
	return tracetest.BenchFile(b, factstest.SharedTraces(b), mb)
}

// gzipFile returns benchFile's input gzip-compressed, cached beside it,
// and the uncompressed size (what MB/s counts).
func gzipFile(b *testing.B, mb int64) (string, int64) {
	path, size := benchFile(b, mb)
	tracetest.Cached(b, path+".gz", func(w io.Writer) error {
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		zw := gzip.NewWriter(w)
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		return zw.Close()
	})
	return path + ".gz", size
}

func sizes() []int64 {
	if os.Getenv("STEPDOCTOR_BENCH_2GB") != "" {
		return []int64{20, 200, 2048}
	}
	return []int64{20, 200}
}

// benchEach runs read over each input size's file, b.N times a size,
// counting the uncompressed JSON bytes.
func benchEach(b *testing.B, input func(*testing.B, int64) (string, int64), read func(f *os.File, path string) error) {
	for _, mb := range sizes() {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path, size := input(b, mb)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			defer tracetest.ReportCPU(b, size, tracetest.CPUTime())
			for i := 0; i < b.N; i++ {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				err = read(f, path)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse measures the reader alone (MB/s of uncompressed JSON).
func BenchmarkParse(b *testing.B) {
	benchEach(b, benchFile, func(f *os.File, path string) error {
		_, err := trace.Parse(f, path)
		return err
	})
}

// BenchmarkParseFacts measures reader plus facts.Derive.
func BenchmarkParseFacts(b *testing.B) {
	benchEach(b, benchFile, func(f *os.File, path string) error {
		t, err := trace.Parse(f, path)
		if err == nil {
			facts.Derive(t, facts.DefaultConfig())
		}
		return err
	})
}

// BenchmarkEncodingJSON decodes the same files with encoding/json into
// generic events, the baseline the reader is compared against.
func BenchmarkEncodingJSON(b *testing.B) {
	benchEach(b, benchFile, func(f *os.File, _ string) error {
		var doc struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		return json.NewDecoder(f).Decode(&doc)
	})
}

// BenchmarkParseGzip measures the reader on gzip input; SetBytes counts
// uncompressed bytes, so MB/s compares with BenchmarkParse.
func BenchmarkParseGzip(b *testing.B) {
	benchEach(b, gzipFile, func(f *os.File, path string) error {
		_, err := trace.Parse(f, path)
		return err
	})
}
