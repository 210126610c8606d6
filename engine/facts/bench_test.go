package facts_test

import (
	"os"
	"path/filepath"
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

// BenchmarkDeriveShared measures facts.Derive on real traces that carry
// what the memory, label and module facts read: df_index_resolver
// (28,010 [memory] events, 2,035 record_function labels) and
// train_resnet18 (6,649 python_function frames, 380 of them nn.Module).
func BenchmarkDeriveShared(b *testing.B) {
	dir := factstest.SharedTraces(b)
	for _, name := range []string{
		"hta/df_index_resolver/df_index_resolver.json.gz",
		"tracelens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
	} {
		b.Run(filepath.Base(name), func(b *testing.B) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			t, err := trace.Parse(f, name)
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(t.Bytes)
			b.ReportAllocs()
			b.ResetTimer()
			defer tracetest.ReportCPU(b, t.Bytes, tracetest.CPUTime())
			for i := 0; i < b.N; i++ {
				facts.Derive(t, facts.DefaultConfig())
			}
		})
	}
}
