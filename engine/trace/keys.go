package trace

import (
	"encoding/binary"
	"math/bits"
)

// The fast path reads a dozen or more object keys an event, from a set of
// a few dozen that repeats event after event ("ph", "ts", "args",
// "External id", "Input Dims", ...). keyTable remembers each key met, with
// how memberOf, argOf and commKey class it, so a key seen before is known
// by comparing the 32 bytes after its opening quote with the cached key
// and its closing quote, a word at a time: no scan for the closing quote,
// no switch over key names.
//
// torch.profiler writes an event's keys in the same order event after
// event, so each slot also remembers the two keys that followed it last:
// the fast path's loops first try the one that followed the previous key
// last time (written out in fastEvent and fastArgs, where a call would
// cost as much as the try), then lookup tries the other one, then the
// key's bucket. A miss (a new key, one near the window's end, or one that
// lost its slot) reads and classes the key as plainKeyAt and the switches
// do, and takes a slot. The classes are those functions' results, so the
// table changes speed only, never what is read: TestKeyTable checks
// lookup against them, and TestKeysParseAsGeneral the fast path's loops
// against the general read.

const (
	keyBucketBits = 6
	keyWays       = 4 // keys a bucket holds
	keySlots      = keyWays << keyBucketBits
	keyWords      = 4              // a cached key and its closing quote fill at most 4 words
	keyMax        = keyWords*8 - 1 // longest cached key, in bytes
	keyWindow     = 64             // bytes a lookup reads from the key's opening quote

	// Keys that do not repeat, or more keys than the table holds, would
	// make most lookups misses, each dearer than reading the key in full:
	// when over half of keyMissCheck lookups missed, the next keyBypass
	// lookups only read and class keys.
	keyMissCheck = 1024
	keyBypass    = 64 << 10

	// Slots past the cache: the places before an event's first key and an
	// args object's first key (lookup's prev), and the slot of a key not
	// cached. Their masks are zero, so no input matches them.
	keyEvent = keySlots
	keyArgs  = keySlots + 1
	keySpare = keySlots + 2
)

// keyTable caches keys by their first 8 bytes, in buckets of keyWays
// keys, so that keys that share their first word ("Process Group Name",
// "Process Group Ranks", ...) or a bucket, met in turn event after event,
// do not evict each other.
type keyTable struct {
	slot [keySlots + 3]keySlot // buckets of keyWays slots, then keyEvent, keyArgs, keySpare

	// Lookups (wrong guesses) and misses (keys read in full and cached)
	// so far, the misses when the current keyMissCheck lookups began, and
	// the lookups left that only read and class keys.
	lookups, misses, lastMisses int
	bypass                      int
}

// keySlot is one cached key: the bytes of the key and its closing quote
// as little-endian words (w) with the mask of the bytes that count (k),
// its length, its classes, and the slots of the keys that came after it
// the last two times. An empty slot is all zero and matches nothing: its mask is
// zero (see matchAll) and no head is zero (see headOf).
type keySlot struct {
	w, k   [keyWords]uint64
	n      int32
	after  uint16 // the key that followed it last
	before uint16 // the key that followed it before that one
	m      member
	a      arg
	comm   bool // commKey(key) != 0
}

// bucketOf hashes a key's first word to its bucket's first slot
// (Fibonacci hashing).
func bucketOf(head uint64) int {
	return int((head*0x9E3779B97F4A7C15)>>(64-keyBucketBits)) * keyWays
}

// headOf is the first word of a key whose first 8 bytes after the opening
// quote are x: x itself when none of them ends the key, else x up to and
// including the closing quote. ok is false when a backslash comes first.
func headOf(x uint64) (head uint64, ok bool) {
	m := zeroBytes(x^(lo8*'"')) | zeroBytes(x^(lo8*'\\'))
	if m == 0 {
		return x, x != 0 // eight NUL bytes would match an empty slot
	}
	q := bits.TrailingZeros64(m) &^ 7 // bit offset of the quote or backslash
	return x & (^uint64(0) >> ((56 - q) & 63)), (x>>q)&0xFF == '"'
}

// lookup reads `"key":` at b[i] as plainKeyAt does (a key without escapes,
// spaces allowed before the colon) when the guess was wrong: it tries the
// key that followed prev before the last one, then the key's bucket, else
// it misses. It returns the key's slot (its index at, the next key's prev)
// and the index after the colon, or next -1 where plainKeyAt gives up.
// prev is the slot of the key before this one in the object, or keyEvent
// or keyArgs for an object's first key. The slot is valid until the next
// call.
func (t *keyTable) lookup(b []byte, i int, prev int) (s *keySlot, at int, next int) {
	if t.lookups++; t.lookups%keyMissCheck == 0 {
		if t.misses-t.lastMisses > keyMissCheck/2 {
			t.bypass = keyBypass
		}
		t.lastMisses = t.misses
	}
	if t.bypass > 0 {
		t.bypass--
		return t.read(b, i)
	}
	if i >= 0 && i+keyWindow <= len(b) {
		win := b[i : i+keyWindow]
		x0, x1, x2, x3 := words(win[1:])
		p := &t.slot[prev]
		if s = &t.slot[p.before]; win[0] == '"' && s.matchAll(x0, x1, x2, x3) {
			// The key before the last one to follow prev: they alternate.
			at = int(p.before)
			p.after, p.before = p.before, p.after
			return s, at, s.colon(b, i)
		}
		if head, ok := headOf(x0); ok && win[0] == '"' {
			at = bucketOf(head)
			for range keyWays {
				if s = &t.slot[at]; s.match(head, x1, x2, x3) {
					p.after, p.before = uint16(at), p.after
					return s, at, s.colon(b, i)
				}
				at++
			}
		}
	}
	return t.miss(b, i, prev)
}

// match reports whether s holds the key whose first word (see headOf) is
// head, followed by the words x1..x3.
func (s *keySlot) match(head, x1, x2, x3 uint64) bool {
	return (head^s.w[0])|(x1&s.k[1]^s.w[1])|(x2&s.k[2]^s.w[2])|(x3&s.k[3]^s.w[3]) == 0
}

// matchAll reports whether s holds the key whose bytes after the opening
// quote are the words x0..x3.
func (s *keySlot) matchAll(x0, x1, x2, x3 uint64) bool {
	return s.k[0] != 0 && (x0&s.k[0]^s.w[0])|(x1&s.k[1]^s.w[1])|(x2&s.k[2]^s.w[2])|(x3&s.k[3]^s.w[3]) == 0
}

// read reads and classes the key at b[i] with plainKeyAt and the
// switches, in the spare slot.
func (t *keyTable) read(b []byte, i int) (*keySlot, int, int) {
	k, next := plainKeyAt(b, i)
	if next < 0 {
		return nil, 0, -1
	}
	s := &t.slot[keySpare]
	s.class(k)
	return s, keySpare, next
}

// miss reads the key at b[i] with plainKeyAt, classes it and caches it.
func (t *keyTable) miss(b []byte, i int, prev int) (*keySlot, int, int) {
	t.misses++
	k, next := plainKeyAt(b, i)
	if next < 0 {
		return nil, 0, -1
	}
	at := keySpare
	if len(k) <= keyMax {
		var pat [keyWords * 8]byte
		copy(pat[:], k)
		pat[len(k)] = '"'
		var e keySlot
		for j := range keyWords {
			e.w[j] = binary.LittleEndian.Uint64(pat[8*j:])
			if lit := len(k) + 1 - 8*j; lit >= 8 {
				e.k[j] = ^uint64(0)
			} else if lit > 0 {
				e.k[j] = 1<<(8*lit) - 1
			}
		}
		e.n = int32(len(k))
		at = bucketOf(e.w[0])
		bkt := t.slot[at : at+keyWays]
		cached := false
		for w := range bkt {
			if bkt[w].w == e.w && bkt[w].k == e.k {
				at, cached = at+w, true // read in full near the window's end
				break
			}
		}
		if !cached {
			// An empty way, else the ways in turn.
			w := 0
			for w < keyWays-1 && bkt[w].k[0] != 0 {
				w++
			}
			if bkt[w].k[0] != 0 {
				w = int(t.misses) & (keyWays - 1)
			}
			bkt[w] = e
			at += w
		}
	}
	s := &t.slot[at]
	s.class(k)
	if at != keySpare {
		t.slot[prev].after, t.slot[prev].before = uint16(at), t.slot[prev].after
	}
	return s, at, next
}

// colon returns the index after the colon that follows s's key, matched
// at b[i], or -1.
func (s *keySlot) colon(b []byte, i int) int {
	if j := i + 2 + int(s.n); j < len(b) && b[j] == ':' {
		return j + 1
	}
	return colonAt(b, i+2+int(s.n))
}

// class sets s's classes to k's.
func (s *keySlot) class(k []byte) {
	s.m, s.a, s.comm = memberOf(k), argOf(k), commKey(k) != 0
}

// colonAt returns the index after the colon that follows a key, at or
// after i past spaces, or -1.
func colonAt(b []byte, i int) int {
	j := skipWS(b, i)
	if j >= len(b) || b[j] != ':' {
		return -1
	}
	return j + 1
}

// words returns the first 32 bytes of w as little-endian words.
func words(w []byte) (x0, x1, x2, x3 uint64) {
	_ = w[31]
	le := binary.LittleEndian
	return le.Uint64(w), le.Uint64(w[8:]), le.Uint64(w[16:]), le.Uint64(w[24:])
}
