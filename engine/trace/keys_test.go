package trace

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestKeyTable: lookup gives plainKeyAt's next index and the classes
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
						s, at, next := kt.lookup(b, 0, prev)
						if prev = at; r.IntN(8) == 0 {
							prev = keyArgs
						}
						where := fmt.Sprintf("round %d, %q cut at %d", round, in, cut)
						if next != wnext {
							t.Fatalf("%s: lookup next %d, plainKeyAt %d", where, next, wnext)
						}
						if next < 0 {
							continue
						}
						if s.m != memberOf(wk) || s.a != argOf(wk) || s.comm != (commKey(wk) != 0) {
							t.Fatalf("%s: lookup classes %v %v %v, want %v %v %v", where, s.m, s.a, s.comm,
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
			if _, _, next := warm.lookup(in, 0, keyEvent); next != len(k)+3 {
				t.Fatalf("%q: next %d", k, next)
			}
		}
		if want := len(known); pass == 0 && warm.misses != want || pass > 0 && warm.misses != before {
			t.Fatalf("pass %d over %d keys: %d misses in all", pass, len(known), warm.misses)
		}
	}
	// Keys that never repeat turn the cache off for a while, and keys
	// read then are still classed right.
	var cold keyTable
	for n := range 3 * keyMissCheck {
		in := []byte(fmt.Sprintf(`"never seen %d": 1`, n) + strings.Repeat(" ", keyWindow))
		if _, _, next := cold.lookup(in, 0, keyArgs); next < 0 {
			t.Fatalf("key %d: next %d", n, next)
		}
	}
	if cold.bypass == 0 {
		t.Fatalf("%d misses in %d lookups: the cache is still on", cold.misses, cold.lookups)
	}
	for _, k := range known {
		in := []byte(`"` + k + `": 1` + strings.Repeat(" ", keyWindow))
		if s, _, next := cold.lookup(in, 0, keyArgs); next != len(k)+3 || s.a != argOf([]byte(k)) || s.m != memberOf([]byte(k)) {
			t.Fatalf("%q while the cache is off: next %d, classes %v %v", k, next, s.m, s.a)
		}
	}

	// An empty table matches nothing: a key of eight NUL bytes reads as
	// plainKeyAt reads it.
	var empty keyTable
	in := append(append([]byte(`"`), bytes.Repeat([]byte{0}, 8)...), []byte(`":1`+strings.Repeat(" ", 70))...)
	if s, _, next := empty.lookup(in, 0, keyEvent); next != 11 || s.m != mOther || s.a != argOther {
		t.Fatalf("eight NUL bytes: next %d, classes %v %v", next, s.m, s.a)
	}
}

// pieces hands out its data in pieces of the sizes given in turn (then
// the rest), so the reader's window ends where a test puts it.
type pieces struct {
	data  []byte
	sizes []int
}

func (r *pieces) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n, r.sizes = min(n, r.sizes[0]), r.sizes[1:]
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// TestKeysParseAsGeneral: the fast path's loops, with their guess and
// lookup, read what the general read reads, on traces built to strain
// the key table: known keys in changing orders (wrong guesses, keys that
// alternate), keys of every length to 40 bytes that share their first 8,
// 31 or 32 bytes, escapes, NUL and control bytes, spaces around colons,
// repeated keys, hundreds of distinct keys (evictions, then the bypass),
// a cached key without its opening quote, and window ends at every place
// in an event.
func TestKeysParseAsGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	known := []string{"External id", "Record function id", "Ev Idx", "Input Dims", "Input type",
		"Concrete Inputs", "correlation", "device", "stream", "bytes", "Total Allocated",
		"registers per thread", "est. achieved occupancy %", "Call stack", "queued", "grid"}
	var odd []string
	for n := range 41 {
		base := strings.Repeat("Process Group Description Padding", 2)[:n]
		odd = append(odd, base)
		for _, at := range []int{0, 6, 7, 8, 9, 15, 16, 30, 31, 32} {
			if at < n {
				b := []byte(base)
				b[at] = "abcdefghijklmnopqrstuvwxyz"[(int(b[at])+1+r.IntN(25))%26]
				odd = append(odd, string(b))
			}
		}
	}
	// Keys the fast path gives up on (escapes, collectives' args, a second
	// device), and others it must not mistake for cached ones.
	rare := []string{`a\"b`, `\u0041BCDEFGHIJ`, "tab\\tkey", "Process Group Name", "Process Group Ranks", "Device Id"}
	odd = append(odd, "nul\x00nul\x00", "\x00\x00\x00\x00\x00\x00\x00\x00", "")
	value := func(k string) string {
		switch k { // the forms torch.profiler writes
		case "Input Dims":
			return `[[1,2],[]]`
		case "Input type", "Concrete Inputs":
			return `["float",""]`
		}
		if r.IntN(50) == 0 { // values the fast path takes to the general read
			return [...]string{`12345678901234567890`, `1.5`, `{}`, `"a\"b"`}[r.IntN(4)]
		}
		return [...]string{`1`, `-7`, `123456789012`, `"s"`, `[]`, `[[1,2],[]]`, `null`, `["float",""]`}[r.IntN(8)]
	}
	event := func(keys []string, colon string, broken bool) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":%d,"ts":%d,"dur":%d,"args":{`, r.IntN(4), r.IntN(3), r.IntN(1e6), r.IntN(100))
		for j, k := range keys {
			if j > 0 {
				sb.WriteString([...]string{",", ", ", ",\n  "}[r.IntN(3)])
			}
			open := `"`
			if broken && j == len(keys)-1 { // a key cached already, its quote lost
				open = [...]string{`'`, `x`, ``, `,"`}[r.IntN(4)]
			}
			fmt.Fprintf(&sb, `%s%s"%s%s`, open, k, colon, value(k))
		}
		sb.WriteString("}}")
		return sb.String()
	}
	fastBefore := FastRead()
	for round := range 75 {
		var evs []string
		distinct := 0
		for range 200 {
			var keys []string
			switch round % 5 {
			case 0: // known keys, a few orders
				keys = slices.Clone(known[:4+r.IntN(len(known)-4)])
				if r.IntN(3) == 0 {
					r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				}
			case 1: // near-identical keys
				for range 1 + r.IntN(12) {
					keys = append(keys, odd[r.IntN(len(odd))])
				}
			case 2: // keys never seen before: evictions and the bypass
				for range 12 {
					keys = append(keys, fmt.Sprintf("k%d-%s", distinct, strings.Repeat("x", r.IntN(30))))
					distinct++
				}
			case 3: // repeats and a mix
				k := known[r.IntN(len(known))]
				keys = []string{k, odd[r.IntN(len(odd))], k}
			case 4: // known keys, one event in a trace broken
				keys = slices.Clone(known[:4+r.IntN(len(known)-4)])
			}
			if r.IntN(40) == 0 {
				keys = append(keys, rare[r.IntN(len(rare))])
			}
			broken := round%5 == 4 && len(evs) == 150
			evs = append(evs, event(keys, [...]string{":", ": ", " :", "\t:\n"}[r.IntN(4)], broken))
		}
		data := []byte(`{"traceEvents":[` + strings.Join(evs, ",\n") + `]}`)
		want, werr := ParseGeneral(bytes.NewReader(data), "keys.json", 1, 0)
		if werr != nil && round%5 != 4 {
			t.Fatalf("round %d: %v", round, werr)
		}
		var sizes []int
		for range 400 {
			sizes = append(sizes, 1+r.IntN(300))
		}
		for _, in := range []io.Reader{bytes.NewReader(data), &pieces{data: data, sizes: sizes}} {
			got, gerr := ParseWith(in, "keys.json", 1, 0)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || werr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: the fast path differs from the general read (error %v, general %v)", round, gerr, werr)
			}
		}
	}
	if n := FastRead() - fastBefore; n < 2*75*200/3 {
		t.Fatalf("the fast path read %d events of %d", n, 2*75*200)
	}
}
