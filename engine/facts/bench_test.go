package facts_test

import (
	"os"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// BenchmarkDerive measures facts.Derive alone on a parsed 200 MB trace;
// SetBytes counts the trace's JSON bytes, so MB/s adds up with
// trace.BenchmarkParse to the parse+facts figure.
func BenchmarkDerive(b *testing.B) {
	path, size := tracetest.BenchFile(b, factstest.SharedTraces(b), 200)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	t, err := trace.Parse(f, path)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	defer tracetest.ReportCPU(b, size, tracetest.CPUTime())
	for i := 0; i < b.N; i++ {
		facts.Derive(t, facts.DefaultConfig())
	}
}
