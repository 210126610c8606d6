package trace_test

import (
	"fmt"
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
	for i := range tr.Events {
		e := &tr.Events[i]
		sh, ok := tr.ShapesOf(e)
		w := want[i]
		if ok != (w.dims != "") || tr.Str(sh.Dims) != w.dims || tr.Str(sh.Types) != w.types || tr.Str(sh.Concrete) != w.concrete {
			t.Errorf("event %d: %v %q %q %q, want %+v", i, ok, tr.Str(sh.Dims), tr.Str(sh.Types), tr.Str(sh.Concrete), w)
		}
	}
	if e := &tr.Events[0]; e.LeadDim != 32 || tr.Str(e.DType) != "float" {
		t.Errorf("lead dim %d, dtype %q", e.LeadDim, tr.Str(e.DType))
	}
	if e := &tr.Events[2]; e.LeadDim != 8 {
		t.Errorf("lead dim of the first non-empty shape: %d", e.LeadDim)
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
