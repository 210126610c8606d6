package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestKeyTable: keyAt gives plainKeyAt's next index and the classes
// memberOf, argOf and commKey give, for every key the reader knows and for
// keys it does not, of every length around the word and cache limits,
// with escapes, spaces, NUL bytes and a window's end near, met repeatedly
// in an order that makes keys share slots.
func TestKeyTable(t *testing.T) {
	keys := []string{"ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id", "s", "bp",
		"correlation", "External id", "external id", "external ts", "device", "stream", "bytes", "Bytes",
		"Total Allocated", "Device Id", "Total Reserved", "Device Type", "Input Dims", "Input dims",
		"Input type", "Concrete Inputs", "Call stack", "Collective name", "Process Group Name",
		"Process Group ID", "Process Group Description", "Process Group Ranks", "dtype", "Group size",
		"In msg nelems", "Out msg nelems", "Record function id", "Ev Idx", "registers per thread",
		"est. achieved occupancy %", "", "\x00\x00\x00\x00\x00\x00\x00\x00", "a\\\"b", "tab\\tkey"}
	known := slices.Clone(keys[:41]) // the keys of real traces
	r := rand.New(rand.NewPCG(7, 8))
	for n := 1; n <= 40; n++ {
		keys = append(keys, strings.Repeat("k", n), strings.Repeat("External", 5)[:n])
		b := make([]byte, n)
		for i := range b {
			b[i] = " aA\"\\:x9"[r.IntN(8)]
		}
		keys = append(keys, string(b))
	}
	var kt keyTable
	prev := keyEvent // as an object's keys chain: each lookup's slot is the next one's prev
	for round := range 4 {
		for _, k := range keys {
			for _, sep := range []string{":", " :", "\t\n:", "x", ""} {
				for _, after := range []string{`"X",`, ` 12`, strings.Repeat(" ", 80)} {
					in := []byte(`"` + k + `"` + sep + after)
					for cut := len(in); cut >= 0 && cut >= len(in)-keyWindow-2; cut-- {
						b := in[:cut]
						wk, wnext := plainKeyAt(b, 0)
						s, at, next := kt.keyAt(b, 0, prev)
						if prev = at; r.IntN(8) == 0 {
							prev = keyArgs
						}
						where := fmt.Sprintf("round %d, %q cut at %d", round, in, cut)
						if next != wnext {
							t.Fatalf("%s: keyAt next %d, plainKeyAt %d", where, next, wnext)
						}
						if next < 0 {
							continue
						}
						if s.m != memberOf(wk) || s.a != argOf(wk) || s.comm != (commKey(wk) != 0) {
							t.Fatalf("%s: keyAt classes %v %v %v, want %v %v %v", where, s.m, s.a, s.comm,
								memberOf(wk), argOf(wk), commKey(wk) != 0)
						}
					}
				}
			}
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	}
	// Once met, every key the reader knows of, and the others a trace
	// has, is found without reading it in full.
	var warm keyTable
	for pass := range 3 {
		before := warm.misses
		for _, k := range known {
			in := []byte(`"` + k + `": 1` + strings.Repeat(" ", keyWindow))
			if _, _, next := warm.keyAt(in, 0, keyEvent); next != len(k)+3 {
				t.Fatalf("%q: next %d", k, next)
			}
		}
		if want := len(known); pass == 0 && warm.misses != want || pass > 0 && warm.misses != before {
			t.Fatalf("pass %d over %d keys: %d misses in all", pass, len(known), warm.misses)
		}
	}
	// An empty table matches nothing: a key of eight NUL bytes reads as
	// plainKeyAt reads it.
	var empty keyTable
	in := append(append([]byte(`"`), bytes.Repeat([]byte{0}, 8)...), []byte(`":1`+strings.Repeat(" ", 70))...)
	if s, _, next := empty.keyAt(in, 0, keyEvent); next != 11 || s.m != mOther || s.a != argOther {
		t.Fatalf("eight NUL bytes: next %d, classes %v %v", next, s.m, s.a)
	}
}
