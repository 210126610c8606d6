package trace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// cancelAfter cancels its context once n bytes were read through it.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelCauseFunc
}

func (c *cancelAfter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if c.n -= int64(n); c.n <= 0 {
		c.cancel(errStop)
	}
	return n, err
}

var errStop = errors.New("stop reading")

// TestParseContextStops: a cancelled read fails with the context's cause,
// naming the file, on every path: file, stream and gzip stream,
// serial and parallel, cancelled before the read and part way through.
// An uncancelled context reads as Parse does.
func TestParseContextStops(t *testing.T) {
	var src bytes.Buffer
	if _, err := tracetest.Repeat(&src, bytes.NewReader(tracetest.DataloaderBound().JSON()), 10<<20); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "t.json")
	os.WriteFile(plain, src.Bytes(), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(src.Bytes())
	zw.Close()
	want, err := trace.Parse(bytes.NewReader(src.Bytes()), plain)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{"file": int64(src.Len()), "stream": int64(src.Len()), "gzip": int64(gz.Len())}
	inputs := map[string]func() io.Reader{
		"file":   func() io.Reader { f, _ := os.Open(plain); t.Cleanup(func() { f.Close() }); return f },
		"stream": func() io.Reader { return bytes.NewReader(src.Bytes()) },
		"gzip":   func() io.Reader { return bytes.NewReader(gz.Bytes()) },
	}
	for name, in := range inputs {
		for _, workers := range []int{1, 2} {
			if name == "gzip" {
				got, err := trace.ParseWithContext(context.Background(), in(), plain, workers, 1<<20)
				if err != nil || len(got.Events) != len(want.Events) {
					t.Fatalf("%s, %d workers, not cancelled: %v", name, workers, err)
				}
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errStop)
			if _, err := trace.ParseWithContext(ctx, in(), plain, workers, 1<<20); !errors.Is(err, errStop) || !strings.HasPrefix(err.Error(), "parse trace "+plain+": ") {
				t.Errorf("%s, %d workers, cancelled before: err %v", name, workers, err)
			}
			ctx, cancel = context.WithCancelCause(context.Background())
			r := &cancelAfter{r: in(), n: sizes[name] / 4, cancel: cancel}
			if _, err := trace.ParseWithContext(ctx, r, plain, workers, 1<<20); !errors.Is(err, errStop) {
				t.Errorf("%s, %d workers, cancelled a quarter in: err %v", name, workers, err)
			}
		}
	}
}
