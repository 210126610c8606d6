package trace

import "testing"

// The [memory] args Event has no field for (Total Reserved, Device Type)
// land in Trace.MemArgs, in either key order; events without them have no
// entry, and a non-integer value is ignored.
func TestMemArgs(t *testing.T) {
	tr := parse(t, `{"traceEvents":[
	{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":2,"ts":10,"args":{"Total Reserved":8192,"Bytes":512,"Total Allocated":4096,"Device Id":0,"Device Type":1}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":20,"args":{"Device Type":0,"Bytes":64}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":30,"args":{"Bytes":-64}},
	{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":2,"ts":40,"args":{"Bytes":8,"Device Type":"cuda","Total Reserved":1.5}}
	]}`)
	want := []struct {
		ok       bool
		devType  int32
		reserved int64
		hasRes   bool
	}{{true, 1, 8192, true}, {true, 0, 0, false}, {false, 0, 0, false}, {false, 0, 0, false}}
	if len(tr.Events) != len(want) {
		t.Fatalf("%d events", len(tr.Events))
	}
	for k, w := range want {
		a, ok := tr.MemArgsOf(&tr.Events[k])
		if ok != w.ok || ok && (a.DeviceType != w.devType || a.TotalReserved != w.reserved || a.HasReserved != w.hasRes) {
			t.Errorf("event %d: %+v %v, want %+v", k, a, ok, w)
		}
	}
	if e := tr.Events[0]; e.Device != 0 || e.Has&HasDeviceID == 0 || e.TotalAllocated != 4096 || e.Bytes != 512 {
		t.Errorf("event 0 = %+v", e)
	}
}
