package trace

import (
	"testing"
	"unsafe"
)

// The byte-count args (memcpy args.bytes; [memory] Bytes, Total
// Allocated, Total Reserved, Device Type) land in Trace.MemArgs, in either
// key order, one entry an event; events without them have no entry, and a
// non-integer value is ignored.
func TestMemArgs(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":2,"ts":10,"args":{"Total Reserved":8192,"Bytes":512,"Total Allocated":4096,"Device Id":0,"Device Type":1}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":20,"args":{"Device Type":0,"Bytes":64}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":30,"args":{"Bytes":-64}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":40,"args":{"Bytes":8,"Device Type":"cuda","Total Reserved":1.5}},
	{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":50,"dur":3,"args":{"device":0,"stream":7,"correlation":9,"bytes":1048576}},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":60,"dur":3,"args":{"device":0,"stream":7,"correlation":10}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":70,"args":{"Bytes":"many"}}
	]}`)
	want := []struct {
		ok       bool
		devType  int32
		reserved int64
		hasRes   bool
		bytes    int64 // -1: no BytesOf
	}{{true, 1, 8192, true, 512}, {true, 0, 0, false, 64}, {true, -1, 0, false, -64}, {true, -1, 0, false, 8}, {true, -1, 0, false, 1 << 20}, {false, 0, 0, false, -1}, {false, 0, 0, false, -1}}
	if len(tr.Events) != len(want) {
		t.Fatalf("%d events", len(tr.Events))
	}
	for k, w := range want {
		e := &tr.Events[k]
		a, ok := tr.MemArgsOf(e)
		if ok != w.ok || ok && (a.DeviceType != w.devType || a.TotalReserved != w.reserved || a.HasReserved != w.hasRes) {
			t.Errorf("event %d: %+v %v, want %+v", k, a, ok, w)
		}
		if b, ok := tr.BytesOf(e); ok != (w.bytes != -1) || ok && b != w.bytes {
			t.Errorf("event %d: bytes %d %v, want %d", k, b, ok, w.bytes)
		}
	}
	if len(tr.MemArgs) != 5 {
		t.Errorf("%d MemArgs entries, want 5", len(tr.MemArgs))
	}
	e := &tr.Events[0]
	a, _ := tr.MemArgsOf(e)
	if b, ok := tr.BytesOf(e); e.Device != 0 || e.Has&HasDeviceID == 0 || e.Has&HasTotalAllocated == 0 || a.TotalAllocated != 4096 || !ok || b != 512 {
		t.Errorf("event 0 = %+v, %+v", e, a)
	}
}

// TestBadIntArgsNoted: an integer arg written as a number that is not an
// integer that fits (a fraction, a number past int64) is ignored and the
// health says so, once per reason with a count; a string is ignored
// without a note (ROCm runtime events write "bytes": "256"); a memcpy's
// negative byte count is dropped and noted. Before, each vanished silently: memcpy_bytes read 0, or a
// negative sum that a facts file then failed validation with.
func TestBadIntArgsNoted(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":50,"dur":3,"args":{"device":0,"stream":7,"correlation":9,"bytes":10000000000000000000}},
	{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":60,"dur":3,"args":{"device":0,"stream":7,"correlation":10,"bytes":"4096"}},
	{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":70,"dur":3,"args":{"device":0,"stream":7,"correlation":11,"bytes":12.5}},
	{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":80,"dur":3,"args":{"device":0,"stream":7,"correlation":12,"bytes":-5}},
	{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":90,"dur":3,"args":{"device":0,"stream":7,"correlation":13,"bytes":64}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":100,"args":{"Bytes":-64}}
	]}`)
	for i, want := range []int64{-1, -1, -1, -1, 64, -64} {
		b, ok := tr.BytesOf(&tr.Events[i])
		if ok != (want != -1) || ok && b != want {
			t.Errorf("event %d: bytes %d %v, want %d", i, b, ok, want)
		}
	}
	got := map[string]int{}
	for _, d := range tr.Health.Diagnostics {
		got[d.Reason] = d.Count
	}
	if got["bad_int_arg"] != 2 || got["negative_bytes"] != 1 || len(got) != 2 {
		t.Errorf("diagnostics %+v, want bad_int_arg x2 and negative_bytes x1", tr.Health.Diagnostics)
	}
}

// TestEventSize guards the store's size: every kept event costs this much
// memory, and every facts pass reads it. An arg only some events carry
// belongs in a side table (MemArgs, Shapes, Comms).
func TestEventSize(t *testing.T) {
	if n := unsafe.Sizeof(Event{}); n != 72 {
		t.Errorf("Event is %d bytes, want 72", n)
	}
}

// An event without a ph the format defines is dropped and counted (read =
// kept + dropped), and a complete event without dur is kept as lasting 0
// with a warning; before, both passed without a word and a kernel
// vanished from gpu_busy_ratio.
func TestMissingPhaseAndDurNoted(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":10,"dur":3,"args":{"device":0}},
	{"cat":"kernel","name":"no ph","pid":0,"tid":7,"ts":20,"dur":3,"args":{"device":0}},
	{"ph":"x","cat":"kernel","name":"lower-case x","pid":0,"tid":7,"ts":30,"dur":3},
	{"ph":5,"cat":"kernel","name":"numeric ph","pid":0,"tid":7,"ts":40,"dur":3},
	{"ph":"X","cat":"kernel","name":"no dur","pid":0,"tid":7,"ts":50,"args":{"device":0}},
	{"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}},
	{"ph":"s","id":1,"cat":"ac2g","name":"flow","pid":0,"tid":7,"ts":10}
	]}`)
	h := tr.Health
	if len(tr.Events) != 2 || h.Dropped != 3 || h.EventsRead != 7 {
		t.Errorf("kept %d, dropped %d of %d read; want 2 kept, 3 dropped of 7", len(tr.Events), h.Dropped, h.EventsRead)
	}
	got := map[string]int{}
	for _, d := range h.Diagnostics {
		got[d.Reason] = d.Count
	}
	if got["unknown_phase"] != 3 || got["missing_dur"] != 1 || len(got) != 2 {
		t.Errorf("diagnostics %+v, want unknown_phase x3 and missing_dur x1", h.Diagnostics)
	}
}
