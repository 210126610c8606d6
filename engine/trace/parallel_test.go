package trace_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// parChunks are the chunk sizes the parallel read is compared at: tiny
// ones put a seam between nearly every pair of events.
var parChunks = []int{1, 300, 64 << 10}

// checkParallel parses data serially and in parallel at each chunk size
// and fails unless the results (events, strings, ids, shapes, health with
// every diagnostic and its offset, errors) are identical. withFacts also
// compares the facts JSON byte for byte.
func checkParallel(t *testing.T, data []byte, withFacts bool) {
	t.Helper()
	want, werr := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0)
	// The fast path (fast.go) reads what the general read does.
	gen, generr := trace.ParseGeneral(bytes.NewReader(data), "t.json", 1, 0)
	if fmt.Sprint(generr) != fmt.Sprint(werr) {
		t.Fatalf("general read: error %v, fast path %v", generr, werr)
	}
	if werr == nil && !reflect.DeepEqual(gen, want) {
		t.Fatalf("the fast path's read differs from the general one:\n%s", firstDiff(want, gen))
	}
	// A file (its size known, so the event store is sized from it) is
	// read serially and at each setting below: the same result again.
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	checkFile := func(workers, chunk int) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got, gerr := trace.ParseWith(f, "t.json", workers, chunk)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("file, %d workers, chunk %d: error %v, streamed %v", workers, chunk, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("file, %d workers, chunk %d: the file's read differs from the stream's:\n%s", workers, chunk, firstDiff(got, want))
		}
	}
	checkFile(1, 0)
	var wantFacts []byte
	if werr == nil && withFacts {
		wantFacts = factsJSON(t, want)
	}
	chunks, workerCounts := parChunks, []int{2, 3}
	if trace.RaceOn {
		// The race detector slows the read tenfold: one setting, the one
		// with the most seams.
		chunks, workerCounts = []int{300}, []int{3}
	}
	for _, chunk := range chunks {
		if chunk == 1 && len(data) > 1<<20 {
			continue // a chunk per event: slow on large inputs, and 300 is nearly that
		}
		for _, workers := range workerCounts {
			checkFile(workers, chunk)
			got, gerr := trace.ParseWith(bytes.NewReader(data), "t.json", workers, chunk)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("chunk %d, %d workers: error %v, serial %v", chunk, workers, gerr, werr)
			}
			if werr != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("chunk %d, %d workers: the parallel read differs from the serial one:\n%s", chunk, workers, firstDiff(got, want))
			}
			if withFacts {
				if gf := factsJSON(t, got); !bytes.Equal(gf, wantFacts) {
					t.Fatalf("chunk %d, %d workers: facts JSON differs from the serial read's", chunk, workers)
				}
			}
		}
	}
}

func factsJSON(t *testing.T, tr *trace.Trace) []byte {
	t.Helper()
	b, err := json.Marshal(facts.Derive(tr, facts.DefaultConfig()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firstDiff names the first part of two traces that differs ("serial":
// want).
func firstDiff(got, want *trace.Trace) string {
	if len(got.Events) != len(want.Events) {
		return fmt.Sprintf("%d events, serial %d", len(got.Events), len(want.Events))
	}
	for i := range got.Events {
		if got.Events[i] != want.Events[i] {
			return fmt.Sprintf("event %d: %+v, serial %+v", i, got.Events[i], want.Events[i])
		}
	}
	if !reflect.DeepEqual(got.Health, want.Health) {
		return fmt.Sprintf("health %+v, serial %+v", got.Health, want.Health)
	}
	if !reflect.DeepEqual(got.Shapes, want.Shapes) {
		return "shapes differ"
	}
	if got.NumStrs() != want.NumStrs() {
		return fmt.Sprintf("%d strings, serial %d", got.NumStrs(), want.NumStrs())
	}
	for i := 0; i < got.NumStrs(); i++ {
		if got.Str(trace.Str(i)) != want.Str(trace.Str(i)) {
			return fmt.Sprintf("string %d: %q, serial %q", i, got.Str(trace.Str(i)), want.Str(trace.Str(i)))
		}
	}
	if got.Bytes != want.Bytes {
		return fmt.Sprintf("Bytes %d, serial %d", got.Bytes, want.Bytes)
	}
	return "string tables, ids or options differ"
}

// TestParallelMatchesSerialOnSharedTraces compares the two reads, and the
// facts JSON each gives, on every shared trace.
func TestParallelMatchesSerialOnSharedTraces(t *testing.T) {
	dir, paths := factstest.SharedTraceFiles(t)
	if len(paths) == 0 {
		t.Skipf("skipping: no traces under %s", dir)
	}
	joined, fast := trace.ParallelJoined(), trace.FastRead()
	defer func() {
		if trace.ParallelJoined() == joined {
			t.Errorf("no event was joined from a parallel read: the parallel path was not taken")
		}
		if trace.FastRead() == fast {
			t.Errorf("no event was read by the fast path")
		}
	}()
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		t.Run(rel, func(t *testing.T) {
			data := readAll(t, p)
			if trace.RaceOn && len(data) > 8<<20 {
				t.Skipf("skipping under the race detector: %d MiB", len(data)>>20)
			}
			checkParallel(t, data, true)
			if strings.HasSuffix(p, ".gz") {
				// The gzip path too: one inflater feeding the workers.
				raw, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				checkParallel(t, raw, false)
			}
		})
	}
}

// TestParallelMatchesSerialOnDamage puts damage at and around seams:
// strings holding seam-like text, truncation, the array's end, trailing
// commas, non-finite tokens, bad UTF-8 and control bytes, string ids,
// B/E pairs across chunks.
func TestParallelMatchesSerialOnDamage(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := 0; i < 60; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		switch i % 12 {
		case 0:
			fmt.Fprintf(&b, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":"t%d","ts":%d,"dur":3,"args":{"Input Dims":[[%d,3],[]],"Input type":["float",""]}}`, i%5, i%3, 100+i, i+1)
		case 1:
			fmt.Fprintf(&b, `{"ph":"X","name":"s}, {\"x\":1}","pid":1,"tid":1,"ts":%d,"dur":1}`, 100+i)
		case 2:
			fmt.Fprintf(&b, `{"ph":"B","name":"span","pid":"p","tid":2,"ts":%d}`, 100+i)
		case 3:
			fmt.Fprintf(&b, `{"ph":"E","pid":"p","tid":2,"ts":%d}`, 200+i)
		case 4:
			fmt.Fprintf(&b, `{"ph":"X","name":"bad\xff%d","pid":1,"tid":1,"ts":%d,"dur":NaN}`, i, 100+i)
		case 5:
			fmt.Fprintf(&b, `{"ph":"X","name":"ctl%c","pid":1,"tid":1,"ts":%d,"dur":-1,}`, 1, 100+i)
		case 6:
			fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"correlation":%d,"x":[1,2,],"y":-inf}}`, 100+i, i)
		case 7:
			fmt.Fprintf(&b, `{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Bytes":%d}}`, 100+i, 1000-i)
		case 8:
			fmt.Fprintf(&b, `{"ph":"X","name":"C:\path %d","pid":"-4611686018427387904","tid":1,"ts":%d,"dur":2}`, i, 100+i)
		case 9:
			fmt.Fprintf(&b, `{"ph":"X","name":"ProfilerStep#%d","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":9}`, i)
		case 10:
			fmt.Fprintf(&b, `{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"}, {\""}}`)
		default:
			fmt.Fprintf(&b, `{"ph":"X","name":"op%d","pid":1,"tid":"%d","ts":"%d.5","dur":"2"}`, i%4, i%7, 100+i)
		}
	}
	full := b.String() + `,],"deviceProperties":[{"id":0,"name":"GPU"}, {"id":1,"name":"GPU"}],"distributedInfo":{"rank":1}}`
	inputs := []string{full, b.String(), b.String() + `]`, b.String() + `,{"ph":"X"`, strings.Replace(full, `"op3"`, `"op3"]`, 1)}
	for n := 0; n < len(full); n += 97 {
		inputs = append(inputs, full[:n])
	}
	joined := trace.ParallelJoined()
	for _, in := range inputs {
		checkParallel(t, []byte(in), true)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(in))
		zw.Close()
		checkParallel(t, z.Bytes(), false)
	}
	if trace.ParallelJoined() == joined {
		t.Errorf("no event was joined from a parallel read: the parallel path was not taken")
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParallelGoesOnPastABadSeam: a string holding seam-like text ends
// one parallel read; the serial reader takes that chunk and the workers
// take the rest, so most events are still joined from workers.
func TestParallelGoesOnPastABadSeam(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	const n = 2000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		name := fmt.Sprintf("op%d", i%9)
		if i%500 == 5 {
			name = `x}, {\"y`
		}
		fmt.Fprintf(&b, `{"ph":"X","name":"%s","pid":1,"tid":1,"ts":%d,"dur":1}`, name, i)
	}
	b.WriteString(`]}`)
	data := []byte(b.String())
	before := trace.ParallelJoined()
	checkParallel(t, data, true)
	runs := int64(len(parChunks) * 2)
	if trace.RaceOn {
		runs = 1
	}
	if joined := (trace.ParallelJoined() - before) / runs; joined < n/2 {
		t.Errorf("%d of %d events joined from workers per read: the read stayed serial after the first bad seam", joined, n)
	}
}
