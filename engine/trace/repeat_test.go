package trace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// Repeated keys and numbers that are not JSON: never read silently.

// findDiag returns tr's diagnostic with the reason, or nil.
func findDiag(tr *trace.Trace, reason string) *trace.Diagnostic {
	for i := range tr.Health.Diagnostics {
		if tr.Health.Diagnostics[i].Reason == reason {
			return &tr.Health.Diagnostics[i]
		}
	}
	return nil
}

// parseAll parses src serially, and checks that the fast path, the
// general read and the parallel read at every setting agree.
func parseAll(t *testing.T, src string) *trace.Trace {
	t.Helper()
	checkParallel(t, []byte(src), true)
	tr, err := trace.ParseWith(strings.NewReader(src), "t.json", 1, 0)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

// wantRepair fails unless tr lists reason as a repair count times, its
// offset at the first occurrence of at in src.
func wantRepair(t *testing.T, tr *trace.Trace, src, reason, at string, count int) {
	t.Helper()
	d := findDiag(tr, reason)
	if d == nil {
		t.Fatalf("no %s diagnostic: %v", reason, tr.Health.Diagnostics)
	}
	off := int64(strings.Index(src, at))
	if d.Kind != trace.DiagRepair || d.Count != count || d.Offset != off || !tr.Health.Repaired {
		t.Errorf("%s: %+v (repaired %v), want a repair x%d at byte %d", reason, *d, tr.Health.Repaired, count, off)
	}
}

const evA = `{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":10,"dur":5}`

// TestRepeatedTraceEvents: every traceEvents array is read, and the
// repeat is listed at the offset of the repeated key.
func TestRepeatedTraceEvents(t *testing.T) {
	evB := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":5}`
	for _, c := range []struct {
		src         string
		events, dup int
	}{
		// The real array, then an empty one: JSON parsers would keep none.
		{`{"traceEvents":[` + evA + `,` + evB + `],"schemaVersion":1,"traceEvents":[]}`, 2, 1},
		// Two traces joined: both arrays, in file order.
		{`{"traceEvents":[` + evA + `],"traceEvents":[` + evB + `]}`, 2, 1},
		{`{"traceEvents":[` + evA + `],"traceEvents":[` + evB + `],"traceEvents":[` + evA + `]}`, 3, 2},
		// A repeat that is not an array holds no events.
		{`{"traceEvents":[` + evA + `],"traceEvents":null}`, 1, 1},
		{`{"traceEvents":[` + evA + `],"traceEvents":{"a":1}}`, 1, 1},
	} {
		tr := parseAll(t, c.src)
		if len(tr.Events) != c.events {
			t.Errorf("%s: %d events, want %d", c.src, len(tr.Events), c.events)
		}
		second := strings.Index(c.src[1:], `"traceEvents"`) + 1
		second += strings.Index(c.src[second+1:], `"traceEvents"`) + 1
		wantRepair(t, tr, c.src, "duplicate_trace_events", c.src[second:], c.dup)
		for i := range tr.Events {
			if tr.Events[i].Index != int32(i) {
				t.Errorf("%s: event %d has index %d", c.src, i, tr.Events[i].Index)
			}
		}
	}
	// One array: no repair.
	if tr := parseAll(t, `{"traceEvents":[`+evA+`]}`); len(tr.Health.Diagnostics) != 0 {
		t.Errorf("one array: %v", tr.Health.Diagnostics)
	}
	// A first traceEvents that is no array is still no trace.
	if _, err := trace.Parse(strings.NewReader(`{"traceEvents":null,"traceEvents":[`+evA+`]}`), "t.json"); err == nil {
		t.Errorf("traceEvents null first: no error")
	}
}

// TestRepeatedTraceEventsParallel: two large arrays, read in parallel
// chunks, give the serial read.
func TestRepeatedTraceEventsParallel(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for a := range 2 {
		if a > 0 {
			b.WriteString(`],"x":[1,2],"traceEvents":[`)
		}
		for i := range 3000 {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":%d,"ts":%d,"dur":2,"args":{"External id":%d}}`, i%7, a, 100+i, i)
		}
	}
	b.WriteString(`]}`)
	src := b.String()
	joined := trace.ParallelJoined()
	tr := parseAll(t, src)
	if trace.ParallelJoined() == joined {
		t.Errorf("no event was joined from a parallel read")
	}
	if len(tr.Events) != 6000 {
		t.Errorf("%d events, want 6000", len(tr.Events))
	}
	wantRepair(t, tr, src, "duplicate_trace_events", `"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op0","pid":1,"tid":1`, 1)
}

// TestRepeatedKeys: of a repeated key the last value is used, as JSON
// parsers read it, and every event with one is counted in a
// duplicate_key repair at the first repeated value.
func TestRepeatedKeys(t *testing.T) {
	wrap := func(evs ...string) string {
		return `{"traceEvents":[` + evA + `,` + strings.Join(evs, ",") + `]}`
	}
	type check func(t *testing.T, tr *trace.Trace, e *trace.Event)
	for _, c := range []struct {
		ev, at string // at: the repeated value
		check  check
	}{
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":30000.000,"dur":1}`, `1}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.Dur != 1000 {
				t.Errorf("dur %d ns, want the last, 1000", e.Dur)
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":30,"ph":"i"}`, `"i"}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.Ph != trace.PhInstant || e.Dur != 0 {
				t.Errorf("ph %c dur %d, want the last ph, an instant", e.Ph, e.Dur)
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":NaN,"ts":20,"dur":3}`, `20,"dur":3}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.TS != 20000 {
				t.Errorf("ts %d, want the last, 20000", e.TS)
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"name":"b","cat":"kernel","cat":"x","pid":5,"tid":6}`, `"b"`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if tr.Name(e) != "b" || e.Cat != trace.CatOther || e.PID != 5 || e.TID != 6 {
				t.Errorf("name %q cat %v pid %d tid %d, want the last of each", tr.Name(e), e.Cat, e.PID, e.TID)
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"args":{"correlation":4,"bytes":8},"args":{"External id":9}}`, `{"External id":9}}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.Has != trace.HasExternalID || e.ExternalID != 9 || e.Correlation != 0 {
				t.Errorf("has %b correlation %d external id %d, want the last args object alone", e.Has, e.Correlation, e.ExternalID)
			}
			if _, ok := tr.BytesOf(e); ok {
				t.Errorf("bytes of the first args object kept")
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"args":{"correlation":4,"correlation":"x"}}`, `"x"}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.Has&trace.HasCorrelation != 0 {
				t.Errorf("correlation %d kept; the last value is no number", e.Correlation)
			}
		}},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"args":{"External id":4,"external id":5,"device":1,"Device Id":2}}`, `5,`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if e.ExternalID != 5 || e.Device != 2 || e.Has != trace.HasExternalID|trace.HasDeviceID {
				t.Errorf("external id %d device %d has %b, want the last of each pair", e.ExternalID, e.Device, e.Has)
			}
		}},
		{`{"ph":"X","cat":"gpu_memcpy","name":"m","pid":0,"tid":7,"ts":20,"dur":3,"args":{"bytes":4,"Bytes":64}}`, `64}`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			if b, ok := tr.BytesOf(e); !ok || b != 64 {
				t.Errorf("bytes %d, %v; want the last, 64", b, ok)
			}
		}},
		{`{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":1,"ts":20,"dur":3,"args":{"Input Dims":[[8,4]],"Input type":["float"],"Input dims":[[2,4]],"Input type":["double"]}}`, `[[2,4]]`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			sh, ok := tr.ShapesOf(e)
			if !ok || sh.LeadDim != 2 || tr.Str(sh.Dims) != "[2,4]" || tr.Str(sh.DType) != "double" || tr.Str(sh.Types) != "double" {
				t.Errorf("shapes %v lead %d dims %q dtype %q; want the last", ok, sh.LeadDim, tr.Str(sh.Dims), tr.Str(sh.DType))
			}
		}},
		{`{"ph":"X","cat":"kernel","name":"nccl","pid":0,"tid":7,"ts":20,"dur":3,"args":{"Collective name":"allreduce","In msg nelems":8,"Collective name":"broadcast","In msg nelems":-1}}`, `"broadcast"`, func(t *testing.T, tr *trace.Trace, e *trace.Event) {
			ca, ok := tr.CommOf(e)
			if !ok || tr.Str(ca.Collective) != "broadcast" || ca.InNelems != -1 || len(tr.Comms) != 1 {
				t.Errorf("comm %+v (%v), %d entries; want the last values", ca, ok, len(tr.Comms))
			}
		}},
	} {
		src := wrap(c.ev)
		tr := parseAll(t, src)
		at := strings.Index(c.ev, c.at)
		if at < 0 {
			t.Fatalf("%s: no %s", c.ev, c.at)
		}
		wantRepair(t, tr, src, "duplicate_key", src[len(src)-len(c.ev)-2+at:], 1)
		var e *trace.Event
		for i := range tr.Events {
			if tr.Events[i].Index == 1 {
				e = &tr.Events[i]
			}
		}
		if e == nil {
			t.Fatalf("%s: event not kept", c.ev)
		}
		c.check(t, tr, e)
	}

	// One count an event, however many keys it repeats.
	two := `{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"ts":2,"dur":1,"dur":3,"args":{"stream":1,"stream":2}}`
	src := wrap(two, two)
	wantRepair(t, parseAll(t, src), src, "duplicate_key", `2,"dur":1,"dur":3`, 2)

	// Keys the reader skips, and the two names of the process group,
	// which PyTorch versions write in turn, are no repeat.
	for _, ev := range []string{
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"id":1,"id":2,"args":{"x":1,"x":2,"Call stack":"a","Call stack":"b"}}`,
		`{"ph":"X","cat":"kernel","name":"nccl","pid":0,"tid":7,"ts":20,"dur":3,"args":{"Process Group Name":"0","Process Group ID":0}}`,
	} {
		if tr := parseAll(t, wrap(ev)); len(tr.Health.Diagnostics) != 0 {
			t.Errorf("%s: %v", ev, tr.Health.Diagnostics)
		}
	}
}

// TestRepeatedMetadataKeys: the top-level keys the reader reads, and the
// keys of deviceProperties entries and distributedInfo: the last value,
// listed.
func TestRepeatedMetadataKeys(t *testing.T) {
	for _, c := range []struct {
		meta, at string
		check    func(t *testing.T, tr *trace.Trace)
	}{
		{`"baseTimeNanoseconds":5,"baseTimeNanoseconds":7`, `7`, func(t *testing.T, tr *trace.Trace) {
			if tr.BaseTimeNS != 7 {
				t.Errorf("base time %d, want 7", tr.BaseTimeNS)
			}
		}},
		{`"deviceProperties":[{"id":0,"name":"A"},{"id":1,"name":"A"}],"computeProperties":[{"id":5}],"deviceProperties":[{"id":0,"name":"B"}]`, `[{"id":0,"name":"B"}]`, func(t *testing.T, tr *trace.Trace) {
			if len(tr.Devices) != 2 || tr.Devices[0].ID != 5 || tr.Devices[1].Name != "B" {
				t.Errorf("devices %+v, want computeProperties' and the last deviceProperties'", tr.Devices)
			}
		}},
		{`"deviceProperties":[{"id":0,"numSms":108,"numSms":132}]`, `132}`, func(t *testing.T, tr *trace.Trace) {
			if len(tr.Devices) != 1 || tr.Devices[0].NumSMs == nil || *tr.Devices[0].NumSMs != 132 {
				t.Errorf("devices %+v, want numSms 132", tr.Devices)
			}
		}},
		{`"distributedInfo":{"rank":1,"world_size":2,"rank":null}`, `null}`, func(t *testing.T, tr *trace.Trace) {
			if d := tr.Distributed; d == nil || d.Rank != nil || d.WorldSize == nil || *d.WorldSize != 2 {
				t.Errorf("distributed %+v, want no rank (the last is null)", d)
			}
		}},
		{`"distributedInfo":{"rank":1},"distributedInfo":{"world_size":2}`, `{"world_size"`, func(t *testing.T, tr *trace.Trace) {
			if d := tr.Distributed; d == nil || d.Rank != nil || *d.WorldSize != 2 {
				t.Errorf("distributed %+v, want the last object", d)
			}
		}},
	} {
		src := `{` + c.meta + `,"traceEvents":[` + evA + `]}`
		tr := parseAll(t, src)
		wantRepair(t, tr, src, "duplicate_key", c.at, 1)
		c.check(t, tr)
	}
	// The profiler flags are on when any copy is.
	src := `{"record_shapes":1,"record_shapes":0,"traceEvents":[` + evA + `]}`
	if tr := parseAll(t, src); !tr.RecordShapes || len(tr.Health.Diagnostics) != 0 {
		t.Errorf("flags: record_shapes %v, %v", tr.RecordShapes, tr.Health.Diagnostics)
	}
}

// TestNumbersNotJSON: a number token JSON does not allow is read as the
// decimal it spells and listed as a bad_number repair at its offset; the
// forms JSON allows are not.
func TestNumbersNotJSON(t *testing.T) {
	for _, c := range []struct {
		ev, at string
		dur    int64 // ns; -1: the event is dropped
	}{
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":030000}`, `030000`, 30000_000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":30000.}`, `30000.`, 30000_000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":1.e3}`, `1.e3`, 1000_000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":-.5}`, `-.5`, -1},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":1-2}`, `1-2`, -1},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":00.500}`, `00.500`, 500},
		{`{"ph":"X","name":"dl","pid":01,"tid":1,"ts":20,"dur":3}`, `01,`, 3000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"args":{"correlation":-07}}`, `-07`, 3000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"args":{"Input Dims":[[08,3]]}}`, `08`, 3000},
		{`{"ph":"X","name":"dl","pid":1,"tid":1,"ts":20,"dur":3,"x":[1,2.]}`, `2.`, 3000},
	} {
		src := `{"traceEvents":[` + evA + `,` + c.ev + `]}`
		tr := parseAll(t, src)
		wantRepair(t, tr, src, "bad_number", c.at, 1)
		e := &tr.Events[len(tr.Events)-1]
		switch {
		case c.dur < 0 && len(tr.Events) != 1:
			t.Errorf("%s: kept with dur %d; want it dropped", c.ev, e.Dur)
		case c.dur >= 0 && (len(tr.Events) != 2 || e.Dur != c.dur):
			t.Errorf("%s: dur %d, want %d", c.ev, e.Dur, c.dur)
		}
	}
	ok := `{"ph":"X","name":"a","pid":-0,"tid":0,"ts":1.5e1,"dur":3E+4,"args":{"correlation":1e0,"x":[-0.0,0e-1]}}`
	if tr := parseAll(t, `{"traceEvents":[`+ok+`]}`); len(tr.Health.Diagnostics) != 0 || tr.Events[0].Dur != 30000_000 {
		t.Errorf("JSON numbers: %v, dur %d", tr.Health.Diagnostics, tr.Events[0].Dur)
	}
	// A lone minus before a word is -Infinity's: non_finite alone.
	src := `{"traceEvents":[` + evA + `,{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-Infinity}]}`
	if tr := parseAll(t, src); findDiag(tr, "bad_number") != nil || findDiag(tr, "non_finite") == nil {
		t.Errorf("-Infinity: %v", tr.Health.Diagnostics)
	}
}
