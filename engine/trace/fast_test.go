package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestFastPathReadsSharedTraces: the fast path (fast.go) reads nearly
// every event of each real trace of 1,000 events or more; what it gives
// up on goes to the general read, which checkParallel compares it with.
// On these traces it reads 98.6% to 100% of the events.
func TestFastPathReadsSharedTraces(t *testing.T) {
	dir, paths := factstest.SharedTraceFiles(t)
	n := 0
	for _, p := range paths {
		data := readAll(t, p)
		before := trace.FastRead()
		tr, err := trace.ParseWith(bytes.NewReader(data), p, 1, 0)
		if err != nil || tr.Health.EventsRead < 1000 {
			continue
		}
		n++
		sameIndex(t, tr) // the record_shapes index, on real traces
		if share := float64(trace.FastRead()-before) / float64(tr.Health.EventsRead); share < 0.95 {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s: the fast path read %.1f%% of %d events, want 95%% or more", rel, 100*share, tr.Health.EventsRead)
		}
	}
	if n == 0 {
		t.Skipf("skipping: no trace of 1,000 events or more under %s", dir)
	}
}

// TestFastPathGivesUp: inputs the fast path must leave to the general
// read (each is also compared with it by checkParallel).
func TestFastPathGivesUp(t *testing.T) {
	for _, ev := range []string{
		`{"ph":"X","name":"a\"b","pid":1,"tid":1,"ts":1,"dur":1}`,                // an escape in a kept string
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1","dur":1}`,                 // a quoted number
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,}`,                  // a trailing comma
		`{"ph":"X","name":"a","name":"b","pid":1,"tid":1,"ts":1,"dur":1}`,        // a repeated member
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":NaN}`,                 // a non-finite token
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":[1,]}}`, // a trailing comma inside a skipped value
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Collective name":"allreduce"}}`,
	} {
		data := []byte(`{"traceEvents":[{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0,"dur":1},` + ev + `]}`)
		before := trace.FastRead()
		if _, err := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		if got := trace.FastRead() - before; got != 1 {
			t.Errorf("%s: the fast path read %d events, want 1 (the other is the general read's)", ev, got)
		}
		checkParallel(t, data, true)
	}
	// A leading '+' or '.' is a syntax error in a timestamp, as the general
	// read says (found by a review: the fast path once read them).
	for _, ev := range []string{
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":+5,"dur":1}`,
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":.5,"dur":1}`,
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":+1}`,
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":.1}`,
	} {
		data := []byte(`{"traceEvents":[{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0,"dur":1},` + ev + `]}`)
		if _, err := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0); err == nil || !strings.Contains(err.Error(), "unexpected") {
			t.Errorf("%s: error %v, want a syntax error", ev, err)
		}
		checkParallel(t, data, true)
	}
	data := []byte(`{"traceEvents":[{"ph":"X", "cat": "kernel", "name":"k", "pid":0, "tid":7,` + "\n" + `"ts":1.5, "dur":2, "args":{"correlation":3, "stream": 7, "x":{"y":[true,null,"\""]}}}]}`)
	before := trace.FastRead()
	if _, err := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0); err != nil {
		t.Fatal(err)
	}
	if trace.FastRead() != before+1 {
		t.Errorf("the usual form with spaces, a fraction and nested skipped args was not read by the fast path")
	}
	checkParallel(t, data, true)
}

// cutAfterFirstRead is a trace file that is cut to size bytes once its
// first read returns, as a file being rewritten is; Stat sees the cut.
type cutAfterFirstRead struct {
	*os.File
	size int64
	cut  bool
}

func (c *cutAfterFirstRead) Read(b []byte) (int, error) {
	n, err := c.File.Read(b)
	if !c.cut {
		c.cut = true
		if terr := os.Truncate(c.Name(), c.size); terr != nil {
			return n, terr
		}
	}
	return n, err
}

// openOps is a trace of n cpu_op events whose traceEvents array is not
// closed yet.
func openOps(n int) string {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":1}`, i%7, i)
	}
	return b.String()
}

// TestFileCutShort: a file cut short while it is read is an error naming
// it, not a trace repaired as truncated, serially and on workers.
func TestFileCutShort(t *testing.T) {
	var b strings.Builder
	b.WriteString(openOps(20000) + `]}`)
	path := filepath.Join(t.TempDir(), "cut.json")
	for _, c := range []struct{ workers, size int }{{1, 100}, {2, 100}, {1, b.Len() - 10}, {2, b.Len() - 10}} {
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = trace.ParseWith(&cutAfterFirstRead{File: f, size: int64(c.size)}, path, c.workers, 64<<10)
		f.Close()
		t.Logf("%d workers, cut to %d: %v", c.workers, c.size, err)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, trace.ErrChanged) {
			t.Errorf("%d workers, cut to %d: error %v, want one naming %s that says it changed while it was read", c.workers, c.size, err, path)
		}
	}
	// A stream that gives its size (a file:// or object-store reader)
	// and ends before it: the same error, naming where it ended.
	data := b.String()
	for _, workers := range []int{1, 2} {
		r := sizedReader{strings.NewReader(data[:100]), int64(len(data))}
		_, err := trace.ParseWith(r, path, workers, 64<<10)
		if !errors.Is(err, trace.ErrChanged) || !strings.Contains(err.Error(), "byte 100:") {
			t.Errorf("%d workers, a stream short of its size: error %v, want ErrChanged at byte 100", workers, err)
		}
		if _, err := trace.ParseWith(sizedReader{strings.NewReader(data), int64(len(data))}, path, workers, 64<<10); err != nil {
			t.Errorf("%d workers, a stream of its size: %v", workers, err)
		}
	}
}

// sizedReader is a stream that tells a size, as object-store readers do.
type sizedReader struct {
	io.Reader
	size int64
}

func (s sizedReader) Size() int64 { return s.size }

// TestSameResultHoweverRead: trailing data and over-long tokens give the
// same result whether the input is a byte stream, a stream read a byte at
// a time, a file or gzip (found by a review: Trace.Bytes and the
// token cap once depended on where the window ended).
func TestSameResultHoweverRead(t *testing.T) {
	ok := `{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0,"dur":1}`
	for _, in := range []string{
		`{"traceEvents":[` + ok + `]}` + "\n" + `{"more":1}`,
		`{"traceEvents":[` + ok + `]}` + strings.Repeat("\x00", 5000),
		`{"traceEvents":[` + ok + `,{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":` + strings.Repeat("7", 5000) + `}}]}`,
		`{"traceEvents":[` + ok + `,{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":` + strings.Repeat("7", 4096) + `}}]}`,
		`{"traceEvents":[` + ok + `,{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":[` + strings.Repeat("n", 5000) + `]}}]}`,
	} {
		data := []byte(in)
		checkParallel(t, data, true)
		want, werr := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0)
		got, gerr := trace.ParseWith(iotest.OneByteReader(bytes.NewReader(data)), "t.json", 1, 0)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%.60q: one-byte reads differ (error %v, streamed %v)", in, gerr, werr)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		gz, zerr := trace.ParseWith(bytes.NewReader(z.Bytes()), "t.json", 1, 0)
		// The gzip error says its offsets count uncompressed bytes; the
		// offsets themselves are the plain read's.
		zmsg := strings.Replace(fmt.Sprint(zerr), " (gzip: byte offsets are in the uncompressed JSON)", "", 1)
		if zmsg != fmt.Sprint(werr) || werr == nil && (gz.Bytes != want.Bytes || len(gz.Events) != len(want.Events)) {
			t.Errorf("%.60q: gzip differs (error %v, plain %v)", in, zerr, werr)
		}
		if werr == nil && want.Bytes != int64(len(data)) {
			t.Errorf("%.60q: Bytes %d, want the input's %d", in, want.Bytes, len(data))
		}
	}
}

// growAfterFirstRead is a trace file that a writer appends to once its
// first read returns, as a profiler still writing it does.
type growAfterFirstRead struct {
	*os.File
	more  string
	grown bool
}

func (g *growAfterFirstRead) Read(b []byte) (int, error) {
	n, err := g.File.Read(b)
	if !g.grown {
		g.grown = true
		w, werr := os.OpenFile(g.Name(), os.O_APPEND|os.O_WRONLY, 0)
		if werr != nil {
			return n, werr
		}
		defer w.Close()
		if _, werr := w.WriteString(g.more); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// TestFileGrewWhileRead: a file that grows while it is read is read to
// its new end, with a warning that says it was still being written.
func TestFileGrewWhileRead(t *testing.T) {
	head := openOps(5000) + ",\n"
	tail := `{"ph":"X","cat":"cpu_op","name":"last","pid":1,"tid":1,"ts":9000,"dur":1}]}`
	path := filepath.Join(t.TempDir(), "growing.json")
	for _, workers := range []int{1, 2} {
		if err := os.WriteFile(path, []byte(head), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.ParseWith(&growAfterFirstRead{File: f, more: tail}, path, workers, 64<<10)
		f.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		var warned bool
		for _, d := range tr.Health.Diagnostics {
			warned = warned || d.Reason == "grew_while_read" && d.Kind == trace.DiagWarning
		}
		if !warned || len(tr.Events) != 5001 || tr.Health.Repaired {
			t.Errorf("%d workers: %d events, repaired %v, diagnostics %v; want 5001 events, not repaired, a grew_while_read warning", workers, len(tr.Events), tr.Health.Repaired, tr.Health.Diagnostics)
		}
	}
}
