package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bombGzip is a gzip stream of prefix, n bytes of fill, then suffix,
// written through a streaming gzip writer (a few hundred KB for 256 MiB).
func bombGzip(t *testing.T, prefix string, fill byte, n int, suffix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write([]byte(prefix)); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := zw.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := zw.Write([]byte(suffix)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// parseAlloc parses src and returns the trace, the error and the bytes
// allocated meanwhile.
func parseAlloc(src []byte) (*Trace, uint64, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := Parse(bytes.NewReader(src), "bomb.json.gz")
	runtime.ReadMemStats(&after)
	return tr, after.TotalAlloc - before.TotalAlloc, err
}

const bombHead = `{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"device":0,"stream":7,"correlation":3}},`

// TestHugeUnreadStringIsSkipped: a string in an args field nobody reads
// is skipped without being held (the window does not grow to its size).
func TestHugeUnreadStringIsSkipped(t *testing.T) {
	src := bombGzip(t, bombHead+`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":0,"tid":1,"ts":1,"dur":2,"args":{"Input Strides":"`, 'a', bombSize, `","x":1}}]}`)
	tr, alloc, err := parseAlloc(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 2 {
		t.Errorf("%d events, want 2", len(tr.Events))
	}
	if alloc > 64<<20 {
		t.Errorf("a %d MiB unread string allocated %d MiB", bombSize>>20, alloc>>20)
	}
}

// TestHugeNameIsCut: a name kept for reports is cut to maxString with a
// repair at the string's offset, and the rest is skipped unheld.
func TestHugeNameIsCut(t *testing.T) {
	for _, fill := range []byte{'n', '\\'} { // plain, and an escape sequence at every cut point
		fillStr := string(fill)
		if fill == '\\' {
			fillStr = `\\`
		}
		head := bombHead + `{"ph":"X","cat":"cpu_op","pid":0,"tid":1,"ts":1,"dur":2,"name":"` + strings.Repeat(fillStr, 10)
		src := bombGzip(t, head, fill, bombSize, `","args":{}}]}`)
		tr, alloc, err := parseAlloc(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Events) != 2 {
			t.Fatalf("%d events, want 2", len(tr.Events))
		}
		name := tr.Name(&tr.Events[1])
		if len(name) > maxString+len("…") || len(name) < maxString/4 || !strings.HasSuffix(name, "…") {
			t.Errorf("name of %d bytes (ends %q), want at most %d, ending in …", len(name), name[max(0, len(name)-8):], maxString)
		}
		if fill == '\\' && strings.Trim(name, `\…`) != "" {
			t.Errorf("cut inside an escape: %q", name[len(name)-8:])
		}
		d := diag(tr, "long_string")
		if d == nil || d.Kind != DiagRepair || d.Offset != int64(strings.LastIndex(head, `"name":"`)+len(`"name":`)) || !tr.Health.Repaired {
			t.Errorf("diagnostic %+v, want a long_string repair at the name's offset %d", d, strings.LastIndex(head, `"name":"`)+len(`"name":`))
		}
		if alloc > 64<<20 {
			t.Errorf("a %d MiB name allocated %d MiB", bombSize>>20, alloc>>20)
		}
	}
}

// TestHugeNumberOrWordIsAnError: a number or bare word of megabytes is a
// syntax error at its offset, not a window the size of it.
func TestHugeNumberOrWordIsAnError(t *testing.T) {
	for _, fill := range []byte{'1', 't'} {
		src := bombGzip(t, bombHead+`{"ph":"X","cat":"cpu_op","name":"x","pid":0,"tid":1,"ts":1,"dur":2,"args":{"v":`, fill, bombSize, `}}]}`)
		_, alloc, err := parseAlloc(src)
		if err == nil || !strings.Contains(err.Error(), "bomb.json.gz") || !strings.Contains(err.Error(), "byte ") {
			t.Errorf("%q: got %v, want a syntax error naming the file and offset", fill, err)
		}
		if alloc > 64<<20 {
			t.Errorf("%q: a %d MiB token allocated %d MiB", fill, bombSize>>20, alloc>>20)
		}
	}
}

// TestSkippedStringEscapesAcrossWindows: an unread string of escaped
// quotes and backslashes longer than the window ends at its real closing
// quote whichever byte the window boundary falls on.
func TestSkippedStringEscapesAcrossWindows(t *testing.T) {
	for pad := 0; pad < 4; pad++ {
		src := bombHead + strings.Repeat(" ", pad) + `{"ph":"X","cat":"cpu_op","name":"after","pid":0,"tid":1,"ts":1,"dur":2,"args":{"s":"` +
			strings.Repeat(`\\\"`, 3*windowSize/8) + `\\","t":"\"}"}}]}`
		tr, err := Parse(strings.NewReader(src), "t.json")
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		if len(tr.Events) != 2 || tr.Name(&tr.Events[1]) != "after" {
			t.Errorf("pad %d: %d events", pad, len(tr.Events))
		}
	}
}

// TestGzipSizeEstimateRace: the event store is sized from the compressed
// bytes read so far while the read-ahead goroutine is reading more. Run
// under -race (.ci/run does).
func TestGzipSizeEstimateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.json.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	w := bufio.NewWriter(zw)
	w.WriteString(`{"traceEvents":[`)
	const n = 3 * chunkEvents
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0,"stream":7,"correlation":%d}},`+"\n", i%97, 10*i, i)
	}
	w.WriteString(`{"ph":"i","name":"end","pid":0,"tid":7,"ts":1}]}`)
	for _, err := range []error{w.Flush(), zw.Close(), f.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	tr, err := Parse(in, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) < n {
		t.Errorf("%d events, want %d", len(tr.Events), n)
	}
}
