package trace_test

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestCommArgs checks the c10d collective args are kept per event: text
// args as strings (the integer Process Group ID of PyTorch 2.2-2.3 as its
// text), counts as integers, a wrong-typed value skipped, absent args 0 /
// -1, and events without them have no entry.
func TestCommArgs(t *testing.T) {
	in := `{"traceEvents": [
	 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
	  "args": {"correlation": 4, "Collective name": "_allgather_base", "In msg nelems": 25136, "Out msg nelems": 201088,
	           "Group size": 8, "dtype": "BFloat16", "Process Group Name": "3", "Process Group Description": "undefined",
	           "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}},
	 {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"External id": 4}},
	 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
	  "args": {"Collective name": "allreduce", "Process Group ID": 0, "Group size": "2", "In msg nelems": -1, "dtype": "Float"}}
	]}`
	tr, err := trace.Parse(strings.NewReader(in), "comm.json")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		coll, group, desc, ranks, dtype string
		size, in, out                   int64
	}
	want := []*got{
		{"_allgather_base", "3", "undefined", "[0, 1, 2, 3, 4, 5, 6, 7]", "BFloat16", 8, 25136, 201088},
		nil,
		{"allreduce", "0", "", "", "Float", -1, -1, -1},
	}
	str := func(s trace.Str) string {
		if s == 0 {
			return ""
		}
		return tr.Str(s)
	}
	for i, w := range want {
		c, ok := tr.CommOf(&tr.Events[i])
		if w == nil {
			if ok {
				t.Errorf("event %d: unexpected comm args %+v", i, c)
			}
			continue
		}
		if !ok {
			t.Fatalf("event %d: no comm args", i)
		}
		g := got{str(c.Collective), str(c.Group), str(c.GroupDesc), str(c.Ranks), str(c.DType), c.GroupSize, c.InNelems, c.OutNelems}
		if g != *w {
			t.Errorf("event %d: %+v, want %+v", i, g, *w)
		}
	}
	if tr.Events[0].Correlation != 4 {
		t.Errorf("correlation lost: %d", tr.Events[0].Correlation)
	}
}
