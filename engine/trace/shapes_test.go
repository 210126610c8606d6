package trace_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestShapes checks the record_shapes args are kept as compact text per
// event, with the leading dimension unchanged, and that events without
// them have no entry.
func TestShapes(t *testing.T) {
	in := `{"traceEvents": [
	 {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
	  "args": {"External id": 3, "Input Dims": [[32, 3, 224, 224], [64, 3, 7, 7], [], [[1, 2], [3]], "x"],
	           "Input type": ["float", "float", "", "TensorList", 7], "Concrete Inputs": ["", "", "", "[2, 2]", "False"]}},
	 {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"External id": 4}},
	 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
	  "args": {"Input type": ["", "c10::BFloat16"], "Input Dims": [[], [8]]}}
	]}`
	tr, err := trace.Parse(strings.NewReader(in), "shapes.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ dims, types, concrete string }{
		{"[32,3,224,224],[64,3,7,7],[],[?,?],?", "float|float||TensorList|?", "|||[2, 2]|False"},
		{},
		{"[],[8]", "|c10::BFloat16", ""},
	}
	sameIndex(t, tr)
	for i := range tr.Events {
		e := &tr.Events[i]
		sh, ok := tr.ShapesOf(e)
		w := want[i]
		if ok != (w.dims != "") || tr.Str(sh.Dims) != w.dims || tr.Str(sh.Types) != w.types || tr.Str(sh.Concrete) != w.concrete {
			t.Errorf("event %d: %v %q %q %q, want %+v", i, ok, tr.Str(sh.Dims), tr.Str(sh.Types), tr.Str(sh.Concrete), w)
		}
	}
	for i, w := range []struct {
		lead  int32
		dtype string
	}{{32, "float"}, {0, ""}, {8, "c10::BFloat16"}} {
		e := &tr.Events[i]
		sh, _ := tr.ShapesOf(e)
		if hasLead := e.Has&trace.HasLeadDim != 0; hasLead != (w.lead != 0) || sh.LeadDim != w.lead || tr.Str(sh.DType) != w.dtype {
			t.Errorf("event %d: lead dim %d (%v), dtype %q; want %d, %q (the first non-empty shape and tensor type)", i, sh.LeadDim, hasLead, tr.Str(sh.DType), w.lead, w.dtype)
		}
	}
}

// TestShapesLeadAndTypeBeyondTextCap checks that the leading dimension
// and dtype are kept when the record_shapes text is too long to keep
// (without the text flag, so the roofline does not take the op for a
// modelled one), and that a repeated args object replaces the first
// whole, as JSON parsers read it (listed as a duplicate_key repair).
func TestShapesLeadAndTypeBeyondTextCap(t *testing.T) {
	long := "[[16, 3]" + strings.Repeat(", [1, 2, 3]", 600) + "]"
	in := `{"traceEvents": [
	 {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
	  "args": {"Input Dims": ` + long + `, "Input type": ["c10::Half"]}},
	 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
	  "args": {"Input type": ["float"]}, "args": {"Input Dims": [[4, 5]], "Input type": ["double"]}}
	]}`
	for _, workers := range []int{1, 2} {
		tr, err := trace.ParseWith(strings.NewReader(in), "long.json", workers, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range []struct {
			lead        int32
			dtype, dims string
			types       string
		}{{16, "c10::Half", "", "c10::Half"}, {4, "double", "[4,5]", "double"}} {
			e := &tr.Events[i]
			sh, ok := tr.ShapesOf(e)
			if !ok || e.Has&trace.HasLeadDim == 0 || e.Has&trace.HasDType == 0 || sh.LeadDim != w.lead || tr.Str(sh.DType) != w.dtype || tr.Str(sh.Dims) != w.dims || tr.Str(sh.Types) != w.types {
				t.Errorf("workers %d, event %d: %v lead %d dtype %q dims %.40q types %q; want %+v", workers, i, ok, sh.LeadDim, tr.Str(sh.DType), tr.Str(sh.Dims), tr.Str(sh.Types), w)
			}
		}
		sameIndex(t, tr)
		if e := &tr.Events[0]; e.Has&trace.HasShapes == 0 {
			t.Errorf("workers %d: the kept Input type text is not flagged", workers)
		}
		if len(tr.Shapes) != 2 {
			t.Errorf("workers %d: %d shape entries, want one an event", workers, len(tr.Shapes))
		}
		if d := tr.Health.Diagnostics; len(d) != 1 || d[0].Reason != "duplicate_key" || d[0].Count != 1 {
			t.Errorf("workers %d: diagnostics %v, want the repeated args listed", workers, d)
		}
	}
}

// TestShapesFastPathAgrees reads Input Dims values through a window that
// holds the whole value (the one-pass fast path) and through one-byte
// reads (the general reader) and wants the same shapes and lead dims.
func TestShapesFastPathAgrees(t *testing.T) {
	for _, dims := range []string{
		`[]`, `[[]]`, `[[], []]`, `[[32, 3, 224, 224], [64,3,7,7], []]`, "[\n [1,\t2]\r\n]",
		`[[-1, 5]]`, `[[-], [7]]`, `[[1.5, 2]]`, `[[1e3]]`, `[[1], ]`, `[, [1]]`, `[[1,,2]]`, `[[1], null]`,
		`[[[1]]]`, `[1, [2]]`, `[[99999999999, 4]]`, `[[2147483648], [3]]`, `[["a"]]`, `[[1] [2]]`, `[[1 2]]`,
		"[[" + strings.Repeat("1234567,", 600) + "1]]", `[[+1]]`, `[[0x1]]`,
	} {
		in := `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":` + dims + `}}]}`
		want, werr := trace.ParseWith(iotest.OneByteReader(strings.NewReader(in)), "d.json", 1, 0)
		got, gerr := trace.ParseWith(strings.NewReader(in), "d.json", 1, 0)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%s: error %v, general reader %v", dims, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast path %+v %q, general reader %+v %q", dims, got.Events[0], got.Str(got.Shapes[0].Dims), want.Events[0], want.Str(want.Shapes[0].Dims))
		}
	}
}

// sameIndex checks that the ShapeIndex finds what ShapesOf finds, for
// every event of tr and for an index past the last.
func sameIndex(t *testing.T, tr *trace.Trace) {
	t.Helper()
	x := tr.IndexShapes()
	for i := range tr.Events {
		e := &tr.Events[i]
		got, gok := x.Of(e)
		want, wok := tr.ShapesOf(e)
		if got != want || gok != wok {
			t.Errorf("event %d: ShapeIndex.Of %+v %v, ShapesOf %+v %v", i, got, gok, want, wok)
		}
	}
	for _, i := range []int32{math.MaxInt32, -1} {
		if past := (trace.Event{Index: i, Has: trace.HasShapes}); func() bool { _, ok := x.Of(&past); return ok }() {
			t.Errorf("an event of index %d has shapes", i)
		}
	}
}

// TestStoreSizedFromInput checks that a serial read of an input of known
// size keeps its event store and shape table close to what they hold:
// each is sized once from the share of the input its first events took,
// with a 10% margin and a small fixed slack, not a whole chunk of slack
// (which on a trace of 60,000 events was 50% more memory to clear).
func TestStoreSizedFromInput(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	const n = 80000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%3 == 2 {
			fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"correlation": %d, "device": 0, "stream": 7}}`, 10*i, i)
			continue
		}
		fmt.Fprintf(&b, `{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": %d, "dur": 5, "args": {"External id": %d, "Input Dims": [[%d, 64], [%d, 64]], "Input type": ["float", "float"]}}`, 10*i, i, i%97+1, i%97+1)
	}
	b.WriteString(`]}`)
	tr, err := trace.ParseWith(strings.NewReader(b.String()), "sized.json", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != n {
		t.Fatalf("%d events kept, want %d", len(tr.Events), n)
	}
	for _, c := range []struct {
		what     string
		len, cap int
	}{{"event store", len(tr.Events), cap(tr.Events)}, {"shape table", len(tr.Shapes), cap(tr.Shapes)}} {
		if c.cap < c.len || float64(c.cap) > 1.2*float64(c.len) {
			t.Errorf("%s: capacity %d for %d entries, want at most 1.2x", c.what, c.cap, c.len)
		}
	}
}
