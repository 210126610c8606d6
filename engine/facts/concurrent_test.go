package facts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestDeriveConcurrent: passes run beside each other (see spareCore) give the facts JSON of the serial order, byte for
// byte, on every shared trace. CI runs it under the race detector.
func TestDeriveConcurrent(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("skipping: one core, so no pass runs beside another")
	}
	dir, paths := factstest.SharedTraceFiles(t)
	defer func(n int) { concurrentMinEvents = n }(concurrentMinEvents)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Parse(f, p)
		f.Close()
		if err != nil {
			continue // not a Kineto trace (the reader's tests cover it)
		}
		derive := func(min int) []byte {
			concurrentMinEvents = min
			b, err := json.Marshal(Derive(tr, DefaultConfig()))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		serial, concurrent := derive(1<<62), derive(0)
		if !bytes.Equal(serial, concurrent) {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s: the facts differ when passes run beside each other", rel)
		}
	}
}
