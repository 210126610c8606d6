package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestFastPathReadsSharedTraces: the fast path (fast.go) reads nearly
// every event of each real trace of 1,000 events or more; what it gives
// up on goes to the general read, which checkParallel compares it with.
// On these traces it reads 98.6% to 100% of the events.
func TestFastPathReadsSharedTraces(t *testing.T) {
	dir := factstest.SharedTraces(t)
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) || strings.HasPrefix(d.Name(), "REFERENCE") {
			return nil
		}
		data := readAll(t, p)
		before := trace.FastRead()
		tr, err := trace.ParseWith(bytes.NewReader(data), p, 1, 0)
		if err != nil || tr.Health.EventsRead < 1000 {
			return nil
		}
		n++
		if share := float64(trace.FastRead()-before) / float64(tr.Health.EventsRead); share < 0.95 {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s: the fast path read %.1f%% of %d events, want 95%% or more", rel, 100*share, tr.Health.EventsRead)
		}
		return nil
	})
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
