package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// update is accepted so that `go test ./... -update` works in every package.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")

func parse(t *testing.T, src string) *Trace {
	t.Helper()
	tr, err := Parse(strings.NewReader(src), "test.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

func diag(tr *Trace, reason string) *Diagnostic {
	for i := range tr.Health.Diagnostics {
		if tr.Health.Diagnostics[i].Reason == reason {
			return &tr.Health.Diagnostics[i]
		}
	}
	return nil
}

func TestObjectKeysAnyOrderAndMetadata(t *testing.T) {
	tr := parse(t, `{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"device":0,"stream":7,"correlation":3}}],
	 "deviceProperties":[{"id":0,"name":"NVIDIA H100","totalGlobalMem":85899345920,"computeMajor":9,"computeMinor":0,"numSms":132}],
	 "distributedInfo":{"backend":"nccl","rank":3,"world_size":8},"baseTimeNanoseconds":1721000000000000000,"record_shapes":1}`)
	if len(tr.Events) != 1 {
		t.Fatalf("events = %d, want 1", len(tr.Events))
	}
	e := tr.Events[0]
	if e.Cat != CatKernel || e.TS != 10_000 || e.Dur != 5_000 || e.Correlation != 3 || e.DeviceID() != 0 || e.StreamID() != 7 {
		t.Errorf("event = %+v", e)
	}
	if len(tr.Devices) != 1 || tr.Devices[0].Name != "NVIDIA H100" || *tr.Devices[0].NumSMs != 132 || *tr.Devices[0].TotalGlobalMem != 85899345920 {
		t.Errorf("devices = %+v", tr.Devices)
	}
	if tr.Distributed == nil || *tr.Distributed.Rank != 3 || *tr.Distributed.WorldSize != 8 || tr.Distributed.Backend != "nccl" {
		t.Errorf("distributed = %+v", tr.Distributed)
	}
	if tr.BaseTimeNS != 1721000000000000000 || !tr.RecordShapes {
		t.Errorf("base %d shapes %v", tr.BaseTimeNS, tr.RecordShapes)
	}
}

func TestBareArrayLegacy(t *testing.T) {
	tr := parse(t, `[
	{"ph":"X","cat":"Operator","name":"aten::add","pid":67844,"tid":"4093687616","ts":1606910596297023,"dur":13,"args":{"external id":2}},
	{"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":1606910596297100,"dur":3,"args":{"correlation":9}},
	{"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Traces","tid":"PyTorch Profiler","ts":1606910596297000,"dur":500}
	]`)
	if len(tr.Events) != 3 {
		t.Fatalf("events = %d", len(tr.Events))
	}
	op, k, span := tr.Events[0], tr.Events[1], tr.Events[2]
	if op.Cat != CatCPUOp || op.TID != 4093687616 || op.ExternalID != 2 || op.TS != 1606910596297023000 {
		t.Errorf("op = %+v", op)
	}
	if k.Cat != CatKernel || tr.IDString(k.TID) != "stream 7" {
		t.Errorf("kernel tid %q cat %v", tr.IDString(k.TID), k.Cat)
	}
	if span.Cat != CatTrace || tr.IDString(span.PID) != "Traces" {
		t.Errorf("span = %+v", span)
	}
}

func TestTimesExactNanoseconds(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"X","name":"a","pid":1,"tid":1,"ts":1712195495406752.8,"dur":0.01},
	{"ph":"X","name":"b","pid":1,"tid":1,"ts":"1606910596297023","dur":"13.5"},
	{"ph":"X","name":"c","pid":1,"tid":1,"ts":1.6069105962970235e15,"dur":2e0},
	{"ph":"X","name":"d","pid":9007199254740993,"tid":"9007199254740995","ts":5}
	]}`)
	want := []struct{ ts, dur int64 }{
		{1712195495406752800, 10},
		{1606910596297023000, 13500},
		{1606910596297023500, 2000},
		{5000, 0},
	}
	for i, w := range want {
		if e := tr.Events[i]; e.TS != w.ts || e.Dur != w.dur {
			t.Errorf("event %d: ts %d dur %d, want %d %d", i, e.TS, e.Dur, w.ts, w.dur)
		}
	}
	if d := tr.Events[3]; d.PID != 9007199254740993 || d.TID != 9007199254740995 {
		t.Errorf("ids above 2^53: pid %d tid %d", d.PID, d.TID)
	}
}

func TestBeginEndPairsAndPhases(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"B","name":"outer","pid":1,"tid":2,"ts":100},
	{"ph":"B","name":"inner","pid":1,"tid":2,"ts":110},
	{"ph":"E","pid":1,"tid":2,"ts":120},
	{"ph":"E","pid":1,"tid":2,"ts":200},
	{"ph":"E","pid":1,"tid":3,"ts":200},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":150,"args":{"Bytes":-512,"Total Allocated":4096,"Device Id":0}},
	{"ph":"C","name":"queue","pid":1,"tid":2,"ts":160,"args":{"n":3}},
	{"ph":"M","name":"process_name","pid":1,"args":{"name":"python"}},
	{"ph":"s","id":1,"cat":"ac2g","pid":1,"tid":2,"ts":100},
	{"ph":"B","name":"never closed","pid":1,"tid":4,"ts":300}
	]}`)
	got := map[string]Event{}
	for _, e := range tr.Events {
		got[string(e.Ph)+":"+tr.Name(&e)] = e
	}
	if len(got) != 4 {
		t.Fatalf("events %v", got)
	}
	if got["X:inner"].Dur != 10_000 || got["X:outer"].Dur != 100_000 || got["X:outer"].TS != 100_000 {
		t.Errorf("B/E pairs: inner %+v outer %+v", got["X:inner"], got["X:outer"])
	}
	m := got["i:[memory]"]
	a, _ := tr.MemArgsOf(&m)
	if b, ok := tr.BytesOf(&m); !ok || b != -512 || m.Has&HasTotalAllocated == 0 || a.TotalAllocated != 4096 || !tr.ProfileMemory {
		t.Errorf("[memory] = %+v, %+v", m, a)
	}
	if _, ok := got["C:queue"]; !ok {
		t.Error("counter event missing")
	}
	if diag(tr, "unmatched_end") == nil || diag(tr, "unclosed_begin") == nil {
		t.Errorf("diagnostics %v", tr.Health.Diagnostics)
	}
}

// Back-to-back B/E spans where the file lists the next B before the E
// that ends the previous span at the same timestamp.
func TestBeginEndBackToBack(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"B","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0},
	{"ph":"B","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1000},
	{"ph":"E","pid":1,"tid":1,"ts":1000},
	{"ph":"B","name":"ProfilerStep#3","pid":1,"tid":1,"ts":2000},
	{"ph":"E","pid":1,"tid":1,"ts":2000},
	{"ph":"E","pid":1,"tid":1,"ts":3000}]}`)
	if len(tr.Events) != 3 || len(tr.Health.Diagnostics) != 0 {
		t.Fatalf("events %d diagnostics %v", len(tr.Events), tr.Health.Diagnostics)
	}
	for _, e := range tr.Events {
		if e.Dur != 1_000_000 {
			t.Errorf("%s lasts %d ns, want 1 ms", tr.Name(&e), e.Dur)
		}
	}
}

func TestNotKineto(t *testing.T) {
	for name, src := range map[string]string{
		"execution trace": `{"schema":"1.0.1","pid":1,"time":"x","nodes":[{"id":1}]}`,
		"int tuples":      `[[1,2,3,4],[5,6,7,8]]`,
		"scalar":          `42`,
		"object":          `{"a":1}`,
	} {
		_, err := Parse(strings.NewReader(src), "x.json")
		if !errors.Is(err, ErrNotKineto) {
			t.Errorf("%s: err = %v, want ErrNotKineto", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "x.json") {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
}

func TestEmptyFile(t *testing.T) {
	for _, src := range []string{"", "  \n"} {
		_, err := Parse(strings.NewReader(src), "empty.json")
		if err == nil || !strings.Contains(err.Error(), "empty.json") || !strings.Contains(err.Error(), "empty") {
			t.Errorf("err = %v", err)
		}
	}
}

const twoEvents = `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":1}`

func TestTruncatedRecovered(t *testing.T) {
	src := twoEvents + `,{"ph":"X","name":"c","pid":1,"ti`
	tr := parse(t, src)
	if len(tr.Events) != 2 || !tr.Health.Repaired {
		t.Fatalf("events %d repaired %v", len(tr.Events), tr.Health.Repaired)
	}
	d := diag(tr, "truncated")
	if d == nil || d.Offset != int64(len(src)) {
		t.Errorf("truncated diagnostic %+v, want offset %d", d, len(src))
	}
	// Missing closing brackets only.
	tr = parse(t, twoEvents)
	if len(tr.Events) != 2 || diag(tr, "truncated") == nil {
		t.Errorf("missing brackets: %d events, %v", len(tr.Events), tr.Health.Diagnostics)
	}
}

func TestTrailingCommas(t *testing.T) {
	tr := parse(t, `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":[1,2,],},},],}`)
	if len(tr.Events) != 1 {
		t.Fatalf("events %d", len(tr.Events))
	}
	if d := diag(tr, "trailing_comma"); d == nil || d.Count != 5 {
		t.Errorf("trailing_comma %+v", d)
	}
}

func TestNonFiniteAndBadStrings(t *testing.T) {
	src := "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"C:\\Users\\op\\x\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"a\":NaN,\"b\":-inf,\"c\":[Infinity],\"Comms Id\":10159970886766084423}}," +
		"{\"ph\":\"X\",\"name\":\"bad\xff\x01name\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":NaN}]}"
	tr := parse(t, src)
	if len(tr.Events) != 1 {
		t.Fatalf("events %d, want 1 (the NaN-duration event dropped)", len(tr.Events))
	}
	if got := tr.Name(&tr.Events[0]); got != `C:\Users\op\x` {
		t.Errorf("name %q", got)
	}
	for _, r := range []string{"non_finite", "bad_escape", "bad_utf8", "control_char", "bad_time"} {
		if diag(tr, r) == nil {
			t.Errorf("missing diagnostic %s in %v", r, tr.Health.Diagnostics)
		}
	}
	if d := diag(tr, "non_finite"); d.Count != 4 {
		t.Errorf("non_finite count %d, want 4", d.Count)
	}
}

func TestDroppedRecords(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"X","name":"sentinel","pid":1,"tid":1,"ts":0,"dur":0},
	{"ph":"X","name":"neg","pid":1,"tid":1,"ts":2000000,"dur":-5},
	{"ph":"X","name":"years","pid":1,"tid":1,"ts":2000000,"dur":63072000000000},
	{"ph":"X","name":"ok","pid":1,"tid":1,"ts":2000000,"dur":5}]}`)
	if len(tr.Events) != 1 || tr.Name(&tr.Events[0]) != "ok" || tr.Health.Dropped != 3 {
		t.Fatalf("kept %d dropped %d", len(tr.Events), tr.Health.Dropped)
	}
	for _, r := range []string{"ts_zero", "negative_dur", "absurd_dur"} {
		if d := diag(tr, r); d == nil || d.Kind != DiagDropped {
			t.Errorf("missing dropped diagnostic %s", r)
		}
	}
	// ts 0 is real data when nothing is later than 1 s.
	tr = parse(t, `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":3},{"ph":"X","name":"b","pid":1,"tid":1,"ts":500,"dur":3}]}`)
	if len(tr.Events) != 2 {
		t.Errorf("small-ts trace lost events: %d", len(tr.Events))
	}
}

func TestSyntaxErrorNamesOffset(t *testing.T) {
	src := `{"traceEvents":[{"ph":"X","name":"a","pid":1 @ }]}`
	_, err := Parse(strings.NewReader(src), "bad.json")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != int64(strings.Index(src, "@")) || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("err = %v", err)
	}
}

func gz(parts ...string) []byte {
	var out bytes.Buffer
	for _, p := range parts {
		w := gzip.NewWriter(&out)
		w.Write([]byte(p))
		w.Close()
	}
	return out.Bytes()
}

func TestGzipMembersAndCut(t *testing.T) {
	full := twoEvents + "]}"
	half := len(full) / 2
	tr, err := Parse(bytes.NewReader(gz(full[:half], full[half:])), "multi.json.gz")
	if err != nil || len(tr.Events) != 2 || !tr.Gzip || tr.Health.Repaired {
		t.Fatalf("multi-member: %v %+v", err, tr)
	}
	data := gz(full)
	tr, err = Parse(bytes.NewReader(data[:len(data)-8]), "trailer.json.gz")
	if err != nil || tr.Health.Repaired || diag(tr, "gzip_trailer") == nil || len(tr.Events) != 2 {
		t.Fatalf("cut gzip trailer: %v %+v", err, tr.Health)
	}
	// A CRC-32 in the trailer that does not match the inflated bytes:
	// damaged somewhere, though the JSON parsed: a repair, not a warning.
	bad := bytes.Clone(data)
	bad[len(bad)-8] ^= 0xff
	tr, err = Parse(bytes.NewReader(bad), "crc.json.gz")
	if err != nil || !tr.Health.Repaired || diag(tr, "gzip_checksum") == nil || diag(tr, "gzip_trailer") != nil {
		t.Fatalf("bad gzip checksum: %v %+v", err, tr.Health)
	}
	// A stream flushed after each event, as a job killed mid-write leaves it.
	var flushed bytes.Buffer
	w := gzip.NewWriter(&flushed)
	w.Write([]byte(twoEvents))
	w.Flush()
	for i := 0; i < 50; i++ {
		fmt.Fprintf(w, `,{"ph":"X","name":"c%d","pid":1,"tid":1,"ts":%d,"dur":1}`, i, 9+i)
		w.Flush()
	}
	w.Close()
	data = flushed.Bytes()
	tr, err = Parse(bytes.NewReader(data[:len(data)/2]), "cut.json.gz")
	if err != nil {
		t.Fatalf("cut gzip: %v", err)
	}
	if !tr.Health.Repaired || diag(tr, "truncated") == nil {
		t.Errorf("cut gzip not reported: %+v", tr.Health)
	}
}

func TestLongStringAcrossWindow(t *testing.T) {
	long := strings.Repeat("x", 3*windowSize)
	src := `{"traceEvents":[{"ph":"X","name":"` + long + `","pid":1,"tid":1,"ts":1,"dur":1,"args":{"skip":"` + long + `\"q"}},{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1}]}`
	tr := parse(t, src)
	// A name is kept up to maxString bytes (then cut, with a repair).
	if len(tr.Events) != 2 || tr.Name(&tr.Events[0]) != long[:maxString]+"…" || diag(tr, "long_string") == nil {
		t.Fatalf("events %d, diagnostics %+v", len(tr.Events), tr.Health.Diagnostics)
	}
	short := strings.Repeat("x", maxString)
	tr = parse(t, strings.ReplaceAll(src, long, short))
	if len(tr.Events) != 2 || tr.Name(&tr.Events[0]) != short || diag(tr, "long_string") != nil {
		t.Fatalf("events %d, diagnostics %+v", len(tr.Events), tr.Health.Diagnostics)
	}
}

// oneByte feeds the reader one byte per Read to exercise every refill path.
type oneByte struct{ r *strings.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestOneByteReads(t *testing.T) {
	src := `{"deviceProperties":[{"id":0,"name":"GPU"}],"traceEvents":[{"ph":"X","cat":"kernel","name":"k\u00e9\ud83d\ude00","pid":0,"tid":7,"ts":12.5,"dur":3,"args":{"correlation":4,"big":[1e400,"s"]}}]}`
	tr, err := Parse(oneByte{strings.NewReader(src)}, "slow.json")
	if err != nil || len(tr.Events) != 1 {
		t.Fatalf("%v", err)
	}
	if e := tr.Events[0]; tr.Name(&e) != "ké😀" || e.TS != 12500 || e.Correlation != 4 {
		t.Errorf("event %+v name %q", e, tr.Name(&e))
	}
}

func TestNoEventsIsAnError(t *testing.T) {
	for name, src := range map[string]string{
		"empty array":   `[]`,
		"empty events":  `{"traceEvents":[],"schemaVersion":1}`,
		"metadata only": `{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]}`,
		"cut at start":  `{"traceEvents": [`,
	} {
		_, err := Parse(strings.NewReader(src), "none.json")
		if err == nil || !strings.Contains(err.Error(), "no timed events") || !strings.Contains(err.Error(), "none.json") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestCutBeforeTraceEvents(t *testing.T) {
	src := `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "na`
	_, err := Parse(strings.NewReader(src), "cut.json")
	if err == nil || errors.Is(err, ErrNotKineto) || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "byte ") {
		t.Fatalf("err = %v, want a cut-short error with the offset", err)
	}
}

func TestTrailingBytesAndConcatenation(t *testing.T) {
	full := twoEvents + "]}"
	// Garbage after a complete gzip member: a warning, not a repair.
	tr, err := Parse(bytes.NewReader(append(gz(full), "garbage!"...)), "g.json.gz")
	if err != nil || tr.Health.Repaired || diag(tr, "gzip_trailer") == nil {
		t.Fatalf("trailing gzip garbage: %v %+v", err, tr.Health)
	}
	// Two traces concatenated: the second is ignored and the report must say so.
	tr, err = Parse(strings.NewReader(full+"\n"+full), "two.json")
	if err != nil || !tr.Health.Repaired || diag(tr, "trailing_data") == nil {
		t.Fatalf("concatenated traces: %v %+v", err, tr.Health)
	}
}

func TestEscapedControlCharIsValid(t *testing.T) {
	tr := parse(t, `{"traceEvents":[{"ph":"X","name":"a\u001b[31mred","pid":1,"tid":1,"ts":1,"dur":1}]}`)
	if tr.Health.Repaired || tr.Name(&tr.Events[0]) != "a\x1b[31mred" {
		t.Errorf("escaped control character: repaired %v name %q", tr.Health.Repaired, tr.Name(&tr.Events[0]))
	}
}

func TestByteOrderMark(t *testing.T) {
	tr, err := Parse(oneByte{strings.NewReader("\xef\xbb\xbf" + twoEvents + "]}")}, "bom.json")
	if err != nil || len(tr.Events) != 2 || diag(tr, "bom") == nil {
		t.Fatalf("BOM: %v %+v", err, tr)
	}
	for _, src := range []string{"\xef", "\xef\xbb", "\xef{}"} {
		if _, err := Parse(strings.NewReader(src), "x.json"); err == nil {
			t.Errorf("%q: want an error", src)
		}
	}
}

// A gzip trace larger than the read-ahead depth parses the same as plain.
func TestGzipReadAhead(t *testing.T) {
	var src strings.Builder
	src.WriteString(`{"traceEvents":[`)
	n := 60000
	for i := 0; i < n; i++ {
		if i > 0 {
			src.WriteByte(',')
		}
		fmt.Fprintf(&src, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":1,"args":{"pad":"%s"}}`, i%97, i, strings.Repeat("x", i%200))
	}
	src.WriteString("]}")
	plain := parse(t, src.String())
	zipped, err := Parse(bytes.NewReader(gz(src.String())), "big.json.gz")
	if err != nil || len(zipped.Events) != n || len(plain.Events) != n || zipped.Bytes != plain.Bytes {
		t.Fatalf("gzip %v: %d events, plain %d; bytes %d vs %d", err, len(zipped.Events), len(plain.Events), zipped.Bytes, plain.Bytes)
	}
	for i := range plain.Events {
		if plain.Events[i].TS != zipped.Events[i].TS {
			t.Fatalf("event %d differs", i)
		}
	}
}

// sized reports a size, as a file does, so the reader sizes its store.
type sized struct {
	*strings.Reader
	size int64
}

func (s sized) Size() int64 { return s.size }

// The sized store gives the same events as the chunked one, also when the
// size is wrong (an estimate that runs short falls back to chunks).
func TestSizedEventStore(t *testing.T) {
	var src strings.Builder
	src.WriteString(`{"traceEvents":[`)
	n := 3*chunkEvents + 123
	for i := 0; i < n; i++ {
		if i > 0 {
			src.WriteByte(',')
		}
		fmt.Fprintf(&src, `{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":%d,"dur":1}`, i+1)
	}
	src.WriteString("]}")
	text := src.String()
	plain := parse(t, text)
	for _, size := range []int64{int64(len(text)), int64(len(text)) / 3} {
		tr, err := Parse(sized{strings.NewReader(text), size}, "sized.json")
		if err != nil || len(tr.Events) != n || len(plain.Events) != n {
			t.Fatalf("size %d: %v, %d events, want %d", size, err, len(tr.Events), n)
		}
		for i := range tr.Events {
			if tr.Events[i] != plain.Events[i] {
				t.Fatalf("size %d: event %d differs", size, i)
			}
		}
	}
}

// TestLayoutsParseAlike parses one trace written compact, indented as
// Kineto writes it, and with tabs, CR LF and a prefix, and wants the same
// events: the reader's fast paths (plain keys, short strings) and its
// general path must agree. Keys longer than the fast path scans, escaped
// keys and names, and numbers in every form are included.
func TestLayoutsParseAlike(t *testing.T) {
	src := `{"schemaVersion": 1, "traceEvents": [
	{"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 7, "tid": "4093687616", "ts": 1606910596302961, "dur": 14,
	 "args": {"External id": 106, "Input Dims": [[32, 128, 28, 28], [], []], "Input type": ["float", "Scalar"], "Trace name": "PyTorch Profiler",
	          "a key longer than the fast path scans": {"nested": [1, 2.5e3, -0.5, true, null]}, "esc\"aped key": "C:\\tmp"}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 1606910596302962.5, "dur": 3.25,
	 "args": {"correlation": 9007199254740993, "External id": 106}},
	{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
	 "pid": 0, "tid": "stream 7", "ts": "1606910596302970.125", "dur": 1e1, "args": {"device": 0, "stream": 7, "correlation": 9007199254740993, "bytes": -12}},
	{"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 1606910596302980, "args": {"Bytes": 512, "Total Allocated": 4096, "Device Id": 0}},
	{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 7, "tid": 7, "ts": 1606910596302900, "dur": 200, "args": {}}
	], "deviceProperties": [{"id": 0, "name": "V100", "totalGlobalMem": 34079637504}]}`
	var compact, indented, odd bytes.Buffer
	if err := json.Compact(&compact, []byte(src)); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&indented, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&odd, compact.Bytes(), "\r", "\t"); err != nil {
		t.Fatal(err)
	}
	want := parse(t, compact.String())
	if len(want.Events) != 5 || want.Health.Repaired {
		t.Fatalf("compact: %d events, repaired %v; want 5, not repaired", len(want.Events), want.Health.Repaired)
	}
	for name, layout := range map[string]string{"indented": indented.String(), "odd whitespace": odd.String(), "as written": src} {
		got := parse(t, layout)
		if !reflect.DeepEqual(got.Events, want.Events) || !reflect.DeepEqual(got.strs, want.strs) || !reflect.DeepEqual(got.ids, want.ids) {
			t.Errorf("%s layout: events differ from compact:\n got %+v\nwant %+v", name, got.Events, want.Events)
		}
		if got.RecordShapes != want.RecordShapes || got.ProfileMemory != want.ProfileMemory || len(got.Devices) != 1 {
			t.Errorf("%s layout: flags or devices differ", name)
		}
	}
}

// TestNotAvailableToken: old libkineto wrote a bare N/A where a number was
// unknown (pytorch/kineto#131). It is repaired like NaN, with its byte
// offset, instead of rejecting the whole trace: in args (skipped), in a
// timestamp (the event dropped) and in an array.
func TestNotAvailableToken(t *testing.T) {
	src := `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"bytes":N/A,"list":[N/A, 1]}},` +
		`{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":N/A},` +
		`{"ph":"X","name":"c","pid":1,"tid":1,"ts":5,"dur":1,"args":{"x":-N/A}}]}`
	tr := parse(t, src)
	if len(tr.Events) != 2 {
		t.Fatalf("events %d, want 2 (the N/A-duration event dropped)", len(tr.Events))
	}
	d := diag(tr, "non_finite")
	if d == nil || d.Count != 4 || d.Kind != DiagRepair {
		t.Fatalf("non_finite diagnostic %+v, want 4 repairs", d)
	}
	if want := int64(strings.Index(src, "N/A")); d.Offset != want || !strings.Contains(d.Message, "N/A") {
		t.Errorf("diagnostic at %d %q, want the first N/A at %d", d.Offset, d.Message, want)
	}
	// Other words with a slash stay errors.
	if _, err := Parse(strings.NewReader(`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"x":N/B}}]}`), "t.json"); err == nil {
		t.Errorf("N/B accepted")
	}
}

// TestNotAvailableAcrossWindow: N/A split by the reader's window boundary
// is still one token.
func TestNotAvailableAcrossWindow(t *testing.T) {
	head := `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"pad":"`
	for shift := -3; shift <= 1; shift++ {
		pad := strings.Repeat("x", windowSize-len(head)-len(`","v":`)+shift)
		src := head + pad + `","v":N/A}}]}`
		tr := parse(t, src)
		if d := diag(tr, "non_finite"); len(tr.Events) != 1 || d == nil || d.Offset != int64(strings.Index(src, "N/A")) {
			t.Errorf("shift %d: %d events, diagnostic %+v", shift, len(tr.Events), d)
		}
	}
}
