package trace

import "sync/atomic"

// The fast path reads an event object in the form torch.profiler writes,
// with the window's bytes and position in locals: no escapes in the
// strings it keeps, numbers in plain form, no repairs to make, the whole
// object inside the window. Anything else makes it give up having changed
// nothing but the string tables, whose interning is idempotent and done in
// file order, and set-only flags the general read sets at the same place
// (RecordShapes, WithStack); event then reads the object in full. So the
// result is the general read's in every case, which the tests check on
// every shared trace and in FuzzParse.

// fastRead counts the events fast paths have read, added when a read
// ends (for the tests that check the fast path is taken).
var fastRead atomic.Int64

// The members and args the fast path keeps are those of memberOf and argOf;
// a seen-set of them (bit 1<<member, 1<<arg) sends an event where one
// repeats to the general read, where the last one wins and the repeat is
// listed (dupKey). So does a number JSON does not allow (030000, 30000.:
// numberAt, nsAt, scanDims), which the general read lists (badNumber).

// pendingArgs holds what the fast path read from args that the general
// read writes to the trace's side tables as it goes; they are written when
// the whole event has been read.
type pendingArgs struct {
	shape OpShapes
	mem   [4]pendingMem // in the order read
	nMem  int
}

// pendingMem is one MemArgs field: its arg and value.
type pendingMem struct {
	a arg
	v int64
}

// fastEvent reads the event object at lx.pos (its '{') and stores it,
// reporting true, or reports false with lx unmoved.
func (p *parser) fastEvent() bool {
	lx := p.lx
	b := lx.buf[:lx.end]
	i := lx.pos + 1
	var r rawEvent
	r.off = lx.base + int64(lx.pos)
	r.ev.Index = p.nEvents
	var pend pendingArgs
	var seen uint32
	prev := keyEvent
	for first := true; ; first = false {
		// Past '{', or a value: a comma, or the end. One compare each in
		// the compact form torch.profiler wrote until 2021.
		if first || i >= len(b) || b[i] != ',' {
			if i = skipWS(b, i); i >= len(b) {
				return false
			}
			if b[i] == '}' {
				i++
				break
			}
			if !first && b[i] != ',' {
				return false
			}
		}
		if !first {
			i++
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		// The key that followed the previous one last time, else a lookup
		// (keys.go). The quote is w[1+n] and n <= keyMax, so j < keyWindow:
		// the mask only spares the bounds check.
		kt := &p.keyTab
		at := int(kt.slot[prev].after)
		key, next := &kt.slot[at], -1
		if i+keyWindow <= len(b) {
			if w := b[i : i+keyWindow]; w[0] == '"' && key.matchAll(words(w[1:])) {
				if j := (2 + int(key.n)) & (keyWindow - 1); w[j] == ':' {
					next = i + j + 1
				}
			}
		}
		if next < 0 {
			if key, at, next = kt.lookup(b, i, prev); next < 0 {
				return false
			}
		}
		prev = at
		i = next
		valOff := lx.base + int64(i) // where the general read takes a value's offset
		if i = skipWS(b, i); i >= len(b) {
			return false
		}
		m := key.m
		if m == mOther {
			if i = skipValueAt(b, i); i < 0 {
				return false
			}
			continue
		}
		bit := uint32(1) << m
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch m {
		case mPh, mCat, mName:
			if b[i] != '"' {
				return false
			}
			s, e := plainStringAt(b, i)
			if e < 0 {
				return false
			}
			i = e + 1
			if m == mPh {
				if e > s {
					r.ph = b[s]
				}
				continue
			}
			lx.escaped = false
			id := p.str(b[s:e], valOff)
			if m == mCat {
				r.ev.CatName = id
			} else {
				r.ev.Name = id
			}
		case mPID, mTID:
			var id ID
			switch c := b[i]; {
			case c == '"':
				s, e := plainStringAt(b, i)
				if e < 0 {
					return false
				}
				if v, ok := plainInt(b[s:e]); ok { // p.id's first case, without the call
					id = ID(v)
				} else {
					id = p.id(b[s:e])
				}
				i = e + 1
			case c >= '0' && c <= '9' || c == '-':
				e, v, plain := numberAt(b, i)
				if e < 0 {
					return false
				}
				if plain { // what plainInt, and so p.id, gives
					id = ID(v)
				} else {
					id = p.id(b[i:e])
				}
				i = e
			default:
				return false
			}
			if m == mPID {
				r.ev.PID = id
			} else {
				r.ev.TID = id
			}
		case mTS, mDur:
			e, v, ok := nsAt(b, i)
			if e < 0 || !ok {
				return false
			}
			i = e
			if m == mTS {
				r.ev.TS, r.hasTS = v, true
			} else {
				r.ev.Dur, r.hasDur = v, true
			}
		case mArgs:
			if i = p.fastArgs(b, i, &r.ev, &pend); i < 0 {
				return false
			}
		}
	}
	lx.pos = i
	p.fastN++
	p.nEvents++
	p.t.Health.EventsRead++
	for _, m := range pend.mem[:pend.nMem] {
		p.memArg(r.ev.Index, m.a, m.v)
	}
	pend.shape.Index = r.ev.Index
	p.addShapes(&r.ev, pend.shape, 0)
	p.store(&r)
	return true
}

// fastArgs reads the args object at b[i] as argsBody does, returning the
// index after it, or -1 to give up. The shape-table text and memory args
// go to pend.
func (p *parser) fastArgs(b []byte, i int, ev *Event, pend *pendingArgs) int {
	if b[i] != '{' {
		return -1
	}
	i++
	var seen uint32
	prev := keyArgs
	for first := true; ; first = false {
		// As in fastEvent: past '{', or a value: a comma, or the end.
		if first || i >= len(b) || b[i] != ',' {
			if i = skipWS(b, i); i >= len(b) {
				return -1
			}
			if b[i] == '}' {
				return i + 1
			}
			if !first && b[i] != ',' {
				return -1
			}
		}
		if !first {
			i++
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		// The key that followed the previous one last time, else a lookup
		// (keys.go). The quote is w[1+n] and n <= keyMax, so j < keyWindow:
		// the mask only spares the bounds check.
		kt := &p.keyTab
		at := int(kt.slot[prev].after)
		key, next := &kt.slot[at], -1
		if i+keyWindow <= len(b) {
			if w := b[i : i+keyWindow]; w[0] == '"' && key.matchAll(words(w[1:])) {
				if j := (2 + int(key.n)) & (keyWindow - 1); w[j] == ':' {
					next = i + j + 1
				}
			}
		}
		if next < 0 {
			if key, at, next = kt.lookup(b, i, prev); next < 0 {
				return -1
			}
		}
		prev = at
		i = next
		valOff := p.lx.base + int64(i)
		if i = skipWS(b, i); i >= len(b) {
			return -1
		}
		a := key.a
		if a == argOther && key.comm {
			return -1 // collectives are few: the general read takes them
		}
		if a == argCallStack {
			p.t.WithStack = true
		}
		if a == argOther || a == argCallStack {
			if i = skipValueAt(b, i); i < 0 {
				return -1
			}
			continue
		}
		bit := uint32(1) << a
		if a == argDeviceID {
			bit = 1 << argDevice // both set Event.Device
		}
		if seen&bit != 0 {
			return -1
		}
		seen |= bit
		switch a {
		case argDims:
			p.t.RecordShapes = true
			if i = p.fastDims(b, i, ev, &pend.shape); i < 0 {
				return -1
			}
			continue
		case argTypes, argConcrete:
			if i = p.fastStringList(b, i, valOff, ev, a == argTypes, &pend.shape); i < 0 {
				return -1
			}
			continue
		}
		flag, dst, dst32, side := intArg(a, ev)
		if flag == 0 && !side {
			if i = skipValueAt(b, i); i < 0 {
				return -1
			}
			continue
		}
		if c := b[i]; c != '-' && (c < '0' || c > '9') {
			if i = skipValueAt(b, i); i < 0 { // a string: ignored, as the general read does
				return -1
			}
			continue
		}
		e, v, plain := numberAt(b, i)
		if e < 0 {
			return -1
		}
		if !plain {
			var ok bool
			if v, ok = parseInt(b[i:e]); !ok {
				return -1 // past int64 or a fraction: the general read notes it
			}
		}
		i = e
		switch {
		case side:
			pend.mem[pend.nMem] = pendingMem{a, v}
			pend.nMem++
			ev.Has |= flag
		case dst32 != nil:
			if v != int64(int32(v)) {
				continue
			}
			*dst32 = int32(v)
			ev.Has |= flag
		default:
			*dst = v
			ev.Has |= flag
		}
	}
}

// fastDims reads args["Input Dims"] at b[i] as inputDims does when its
// dimsFast takes it, or returns -1.
func (p *parser) fastDims(b []byte, i int, ev *Event, sh *OpShapes) int {
	if b[i] != '[' {
		return -1
	}
	d, ok := scanDims(b[i+1:])
	if !ok {
		return -1
	}
	out := b[i+1 : i+1+d.n]
	if d.ws {
		out = p.compactDims(out)
	}
	if len(out) > 0 && len(out) <= maxShapeText {
		sh.Dims = p.str(out, p.lx.base+int64(i))
	}
	if d.hasLead && ev.Has&HasLeadDim == 0 {
		sh.LeadDim = d.lead
		ev.Has |= HasLeadDim
	}
	return i + d.n + 2
}

// fastStringList reads args["Input type"] (types true: keeping the first
// tensor dtype in sh.DType) or args["Concrete Inputs"] at b[i] as
// stringList does, for a list of plain strings, or returns -1. off is the
// value's offset as the general read takes it.
func (p *parser) fastStringList(b []byte, i int, off int64, ev *Event, types bool, sh *OpShapes) int {
	if b[i] != '[' {
		return -1
	}
	buf := p.shapeBuf[:0]
	for n := 0; ; n++ {
		i = skipWS(b, i+1) // past '[' or ','
		if i >= len(b) {
			return -1
		}
		if n == 0 && b[i] == ']' {
			break
		}
		if b[i] != '"' {
			return -1
		}
		s, e := plainStringAt(b, i)
		if e < 0 {
			return -1
		}
		if n > 0 {
			buf = append(buf, '|')
		}
		buf = append(buf, b[s:e]...)
		if len(buf) > maxShapeText {
			return -1
		}
		if types && sh.DType == 0 && isTensorType(b[s:e]) {
			p.lx.escaped = false
			sh.DType = p.str(b[s:e], p.lx.base+int64(i))
		}
		if i = skipWS(b, e+1); i >= len(b) {
			return -1
		}
		if b[i] == ']' {
			break
		}
		if b[i] != ',' {
			return -1
		}
	}
	p.shapeBuf = buf
	var s Str
	if len(buf) > 0 {
		p.lx.escaped = false
		s = p.str(buf, off)
	}
	if types {
		sh.Types = s
	} else {
		sh.Concrete = s
	}
	return i + 1
}

// skipWS returns the index of the first byte at or after i that is not
// JSON whitespace (len(b) when none is).
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// plainKeyAt reads `"key"` and the colon after it (spaces allowed before
// the colon) at b[i], a key without escapes; next is the index after the
// colon, or -1.
func plainKeyAt(b []byte, i int) (key []byte, next int) {
	if i >= len(b) || b[i] != '"' {
		return nil, -1
	}
	s, e := plainStringAt(b, i)
	if e < 0 {
		return nil, -1
	}
	j := skipWS(b, e+1)
	if j >= len(b) || b[j] != ':' {
		return nil, -1
	}
	return b[s:e], j + 1
}

// plainStringAt finds the string whose opening quote is b[i]: its bytes
// are b[s:e] and b[e] is the closing quote. e is -1 when the string has an
// escape, is longer than maxString or does not end inside b.
func plainStringAt(b []byte, i int) (s, e int) {
	s = i + 1
	q := quoteOrSlashWords(b, s, shortString)
	if q < 0 {
		q = quoteOrSlash(b[s:min(len(b), s+maxString+1)])
		if q < 0 {
			return s, -1
		}
		q += s
	}
	if b[q] != '"' {
		return s, -1
	}
	return s, q
}

// numberEnd returns the end of the number token at b[i] (a digit, or '-'
// and a digit), as lexer.number reads it, or -1 for anything else (the
// general read rejects "+5" and ".5"), for a token that is not a JSON
// number (030000, 30000.: the general read lists the repair), or when it
// may go on past b or is too long.
func numberEnd(b []byte, i int) int {
	e, _, _ := numberAt(b, i)
	return e
}

// numberAt is numberEnd that also parses the token as it scans it, when
// it is a plain integer (a minus and 1 to 18 digits without a leading
// zero, as plainInt takes): its value v, with plain true. The caller
// parses other numbers from the text.
func numberAt(b []byte, i int) (end int, v int64, plain bool) {
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	if j >= len(b) {
		return -1, 0, false
	}
	c0 := b[j]
	if c0 < '0' || c0 > '9' {
		return -1, 0, false
	}
	start := j
	u, j := digitsAt(b, j)
	digits := j - start
	for j < len(b) && isNumByte(b[j]) {
		j++
	}
	if j >= len(b) || j-i > maxToken {
		return -1, 0, false
	}
	if j-start != digits || digits > 18 || c0 == '0' && digits > 1 {
		if !jsonNumber(b[i:j]) {
			return -1, 0, false
		}
		return j, 0, false
	}
	if neg {
		return j, -int64(u), true
	}
	return j, int64(u), true
}

// digitsAt returns the run of digits at b[j:k] and its value, which wraps
// past 19 digits (where the callers do not use it).
func digitsAt(b []byte, j int) (u uint64, k int) {
	for k = j; k < len(b); k++ {
		d := b[k] - '0'
		if d > 9 {
			break
		}
		u = u*10 + uint64(d)
	}
	return u, k
}

// nsAt reads the number at b[i] as numberEnd finds it and parseNS takes
// it (microseconds to exact nanoseconds), in one pass for the forms
// torch.profiler writes, whole microseconds (until 2021) and three
// decimals (Kineto since 2022), without a leading zero; any other number
// goes to parseNS. end is -1 where numberEnd gives -1; ok is parseNS's.
func nsAt(b []byte, i int) (end int, ns int64, ok bool) {
	if c := b[i]; c >= '0' && c <= '9' {
		u, k := digitsAt(b, i)
		if k-i <= 18 && u < 1<<53 && k < len(b) && (c != '0' || k == i+1) {
			switch {
			case !isNumByte(b[k]):
				return k, int64(u) * 1000, true
			case b[k] == '.' && k+4 < len(b) && !isNumByte(b[k+4]):
				f0, f1, f2 := b[k+1]-'0', b[k+2]-'0', b[k+3]-'0'
				if f0 <= 9 && f1 <= 9 && f2 <= 9 {
					return k + 4, int64(u)*1000 + int64(f0)*100 + int64(f1)*10 + int64(f2), true
				}
			}
		}
	}
	e := numberEnd(b, i)
	if e < 0 {
		return -1, 0, false
	}
	ns, ok = parseNS(b[i:e])
	return e, ns, ok
}

// skipValueAt skips the value at b[i] as lexer.skipValue does when it has
// nothing to repair, returning the index after it, or -1 (a non-finite
// token, a trailing comma, an unknown word, the value going on past b).
func skipValueAt(b []byte, i int) int {
	switch c := b[i]; {
	case c == '"':
		return skipStringAt(b, i)
	case c >= '0' && c <= '9' || c == '-':
		return numberEnd(b, i)
	case c == '[' && i+1 < len(b) && b[i+1] == ']': // the empty lists most ops have
		return i + 2
	case c == '{' || c == '[':
		depth := 0
		for i < len(b) {
			switch c := b[i]; c {
			case '{', '[':
				depth++
				i++
			case '}', ']':
				depth--
				i++
				if depth == 0 {
					return i
				}
			case '"':
				if i = skipStringAt(b, i); i < 0 {
					return -1
				}
			case ',':
				i = skipWS(b, i+1)
				if i >= len(b) || b[i] == '}' || b[i] == ']' {
					return -1
				}
			case ' ', '\n', '\r', '\t', ':':
				i++
			default:
				if i = skipScalarAt(b, i); i < 0 {
					return -1
				}
			}
		}
		return -1
	default:
		return skipScalarAt(b, i)
	}
}

// skipScalarAt skips a number or true/false/null at b[i], or returns -1.
func skipScalarAt(b []byte, i int) int {
	c := b[i]
	if c == '-' || c >= '0' && c <= '9' {
		return numberEnd(b, i)
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(b)-i > len(w) && string(b[i:i+len(w)]) == w {
			if n := b[i+len(w)]; (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z') || n == '/' {
				return -1
			}
			return i + len(w)
		}
	}
	return -1
}

// skipStringAt skips the string whose opening quote is b[i], escapes and
// all, returning the index after its closing quote, or -1 when it does not
// end inside b.
func skipStringAt(b []byte, i int) int {
	j := i + 1
	for {
		q := quoteOrSlash(b[j:])
		if q < 0 {
			return -1
		}
		j += q
		if b[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
		if j >= len(b) {
			return -1
		}
	}
}
