package trace

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// rawEvent collects one event object's fields before it is classified.
type rawEvent struct {
	ev      Event
	ph      byte
	hasTS   bool
	hasDur  bool
	badTime bool
	off     int64
}

// event parses one event object (the '{' is next) and stores it.
func (p *parser) event() error {
	if !p.par.general && p.fastEvent() {
		return nil
	}
	lx := p.lx
	var r rawEvent
	r.off = lx.offset()
	r.ev.Index = p.nEvents
	p.nEvents++
	p.t.Health.EventsRead++
	lx.pos++ // '{'
	p.evDup = false
	var seen uint16
	var badTS, badDur bool
	for first := true; ; first = false {
		k, done, err := p.member(first, "an event")
		if err != nil {
			return err
		}
		if done {
			break
		}
		key := memberOf(k)
		if key != mOther {
			if bit := uint16(1) << key; seen&bit == 0 {
				seen |= bit
			} else {
				p.dupKey(k, "an event")
				if key == mArgs {
					p.dropArgs(&r.ev) // the last args object is the event's
				}
			}
		}
		switch key {
		case mPh:
			v, err := p.strValue()
			if err != nil {
				return err
			}
			r.ph = 0
			if len(v) > 0 {
				r.ph = v[0]
			}
		case mCat:
			off := lx.offset()
			v, err := p.strValue()
			if err != nil {
				return err
			}
			r.ev.CatName = p.str(v, off)
		case mName:
			off := lx.offset()
			v, err := p.strValue()
			if err != nil {
				return err
			}
			r.ev.Name = p.str(v, off)
		case mPID, mTID:
			id, err := p.idValue()
			if err != nil {
				return err
			}
			if key == mPID {
				r.ev.PID = id
			} else {
				r.ev.TID = id
			}
		case mTS, mDur:
			v, ok, err := p.timeValue()
			if err != nil {
				return err
			}
			if key == mTS {
				r.ev.TS, r.hasTS, badTS = v, true, !ok
			} else {
				r.ev.Dur, r.hasDur, badDur = v, true, !ok
			}
		case mArgs:
			if err := p.args(&r.ev); err != nil {
				return err
			}
		default:
			if err := lx.skipValue(); err != nil {
				return err
			}
		}
	}
	r.badTime = badTS || badDur
	p.store(&r)
	return nil
}

// Repeated keys. torch.profiler never repeats a key, and JSON leaves what
// a repeated key means to the reader; JSON parsers (Python's json,
// JavaScript's JSON.parse, so the trace viewers) keep the last value. So
// does this reader, for every key it reads: an event member (ph, ts, dur,
// ...; a repeated args object replaces the earlier one whole), an arg
// (External id and external id, bytes and Bytes, Input Dims and Input
// dims, device and Device Id are one key each: each pair sets one field),
// a c10d arg, a key of a deviceProperties entry or of distributedInfo,
// and the top-level keys but traceEvents (see topKeys). It never goes
// unsaid: each object with a repeated key the reader reads is counted in
// a duplicate_key repair, whose offset is the first repeated key's
// value. Keys the reader skips are not checked. The fast path (fast.go)
// leaves an event with a repeated key to the general read, which alone
// decides, so every read (fast, general, parallel) gives the same.

// dupKey lists a repeated key k of the event being read (where: the
// object it is in), once an event.
func (p *parser) dupKey(k []byte, where string) {
	if p.evDup {
		return
	}
	p.evDup = true
	p.noteDup(k, where)
}

// noteDup lists a repeated key k in where, at the value's offset.
func (p *parser) noteDup(k []byte, where string) {
	p.note(DiagRepair, "duplicate_key", fmt.Sprintf("a key repeated in an object (first %q, in %s): the last value is used, as JSON parsers do", k, where), p.lx.offset())
}

// dropArgs undoes what an event's args object set (Event's args fields
// and Has flags, and its entries in the side tables), before a repeated
// args member is read in its place.
func (p *parser) dropArgs(ev *Event) {
	t := p.t
	if ev.Has&hasShapeEntry != 0 {
		t.Shapes = t.Shapes[:len(t.Shapes)-1]
	}
	if ev.Has&HasComm != 0 {
		t.Comms = t.Comms[:len(t.Comms)-1]
	}
	if n := len(t.MemArgs); n > 0 && t.MemArgs[n-1].Index == ev.Index {
		t.MemArgs = t.MemArgs[:n-1]
	}
	ev.Has = 0
	ev.Correlation, ev.ExternalID, ev.Device, ev.Stream = 0, 0, 0, 0
}

// clearArg undoes integer arg a of ev (see intArg) before a repeated one
// is read.
func (p *parser) clearArg(ev *Event, a arg) {
	switch a {
	case argCorrelation:
		ev.Correlation, ev.Has = 0, ev.Has&^HasCorrelation
	case argExternalID:
		ev.ExternalID, ev.Has = 0, ev.Has&^HasExternalID
	case argDevice, argDeviceID:
		ev.Device, ev.Has = 0, ev.Has&^(HasDevice|HasDeviceID)
	case argStream:
		ev.Stream, ev.Has = 0, ev.Has&^HasStream
	case argBytes, argTotalAllocated, argReserved, argDeviceType:
		m := p.t.MemArgs
		n := len(m)
		if n == 0 || m[n-1].Index != ev.Index {
			return
		}
		e := &m[n-1]
		switch a {
		case argBytes:
			e.Bytes, ev.Has = 0, ev.Has&^HasBytes
		case argTotalAllocated:
			e.TotalAllocated, ev.Has = 0, ev.Has&^HasTotalAllocated
		case argReserved:
			e.TotalReserved, e.HasReserved = 0, false
		default:
			e.DeviceType = -1
		}
	}
}

// member is an event member the reader keeps (mOther: skipped).
type member uint8

const (
	mOther member = iota
	mPh
	mCat
	mName
	mPID
	mTID
	mTS
	mDur
	mArgs
)

// memberOf classifies an event's key (event, and the fast path).
func memberOf(k []byte) member {
	switch string(k) {
	case "ph":
		return mPh
	case "cat":
		return mCat
	case "name":
		return mName
	case "pid":
		return mPID
	case "tid":
		return mTID
	case "ts":
		return mTS
	case "dur":
		return mDur
	case "args":
		return mArgs
	}
	return mOther
}

// arg is an args member the reader keeps (argOther: skipped; collective
// args are commKey's).
type arg uint8

const (
	argOther arg = iota
	argCorrelation
	argExternalID
	argDevice
	argStream
	argBytes
	argTotalAllocated
	argDeviceID
	argReserved
	argDeviceType
	argDims
	argTypes
	argConcrete
	argCallStack
)

// argOf classifies an args key (argsBody, and the fast path).
func argOf(k []byte) arg {
	switch string(k) {
	case "correlation":
		return argCorrelation
	case "External id", "external id":
		return argExternalID
	case "device":
		return argDevice
	case "stream":
		return argStream
	case "bytes", "Bytes":
		return argBytes
	case "Total Allocated":
		return argTotalAllocated
	case "Device Id":
		return argDeviceID
	case "Total Reserved":
		return argReserved
	case "Device Type":
		return argDeviceType
	case "Input Dims", "Input dims":
		return argDims
	case "Input type":
		return argTypes
	case "Concrete Inputs":
		return argConcrete
	case "Call stack":
		return argCallStack
	}
	return argOther
}

// badIntArg notes an integer arg (args.bytes, args.correlation, ...)
// written as a number that is not an integer that fits: a fraction, a
// number past int64. The arg is ignored, as if absent, so that a sum such
// as memcpy_bytes counts what the trace states, and the health says so.
// A string value is ignored without a note: ROCm runtime events write
// "stream": "0x0" and "bytes": "256" as strings, and no fact reads them.
func (p *parser) badIntArg(a arg, num []byte, off int64) {
	v := string(num)
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	p.note(DiagWarning, "bad_int_arg", fmt.Sprintf("args[%q] is %s, not an integer that fits in 64 bits; ignored", argNames[a], v), off)
}

// argNames are the keys the integer args are read from, for messages.
var argNames = [...]string{
	argCorrelation: "correlation", argExternalID: "External id", argDevice: "device", argStream: "stream",
	argBytes: "bytes", argTotalAllocated: "Total Allocated", argDeviceID: "Device Id",
	argReserved: "Total Reserved", argDeviceType: "Device Type",
}

// intArg is where an integer arg of kind a is kept: an Event field (dst
// or dst32) with its Has flag, or, when side, a MemArgs field (memArg),
// with the Has flag that says it is set, if any; all zero for the other
// kinds.
func intArg(a arg, ev *Event) (flag uint16, dst *int64, dst32 *int32, side bool) {
	switch a {
	case argCorrelation:
		return HasCorrelation, &ev.Correlation, nil, false
	case argExternalID:
		return HasExternalID, &ev.ExternalID, nil, false
	case argDevice:
		return HasDevice, nil, &ev.Device, false
	case argStream:
		return HasStream, nil, &ev.Stream, false
	case argBytes:
		return HasBytes, nil, nil, true
	case argTotalAllocated:
		return HasTotalAllocated, nil, nil, true
	case argDeviceID:
		return HasDeviceID, nil, &ev.Device, false
	case argReserved, argDeviceType:
		return 0, nil, nil, true
	}
	return 0, nil, nil, false
}

// strValue reads a string value; a non-string is skipped and returns nil.
func (p *parser) strValue() ([]byte, error) {
	lx := p.lx
	c, err := lx.peek()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, lx.skipValue()
	}
	lx.pos++
	return lx.strBody()
}

func (p *parser) idValue() (ID, error) {
	lx := p.lx
	c, err := lx.peek()
	if err != nil {
		return 0, err
	}
	var b []byte
	switch {
	case c == '"':
		lx.pos++
		b, err = lx.strBody()
	case c == '-' || (c >= '0' && c <= '9'):
		b, err = lx.number()
	default:
		return 0, lx.skipValue()
	}
	if err != nil {
		return 0, err
	}
	return p.id(b), nil
}

// timeValue reads ts or dur in microseconds (number or numeric string) as
// nanoseconds. ok is false for non-numbers (NaN, inf, garbage).
func (p *parser) timeValue() (int64, bool, error) {
	lx := p.lx
	c, err := lx.peek()
	if err != nil {
		return 0, false, err
	}
	off := lx.offset()
	var b []byte
	switch {
	case c == '"':
		b, err = lx.str()
	case c == '-' || (c >= '0' && c <= '9'):
		b, err = lx.number()
		if err == nil && len(b) == 1 && b[0] == '-' {
			// -inf / -Infinity
			w, err := lx.word()
			if err != nil {
				return 0, false, err
			}
			p.note(DiagRepair, "non_finite", fmt.Sprintf("non-JSON token %q in a timestamp", "-"+string(w)), off)
			return 0, false, nil
		}
	case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		w, err := lx.word()
		if err != nil {
			return 0, false, err
		}
		if string(w) != "null" {
			p.note(DiagRepair, "non_finite", fmt.Sprintf("non-JSON token %q in a timestamp", w), off)
		}
		return 0, false, nil
	default:
		return 0, false, lx.skipValue()
	}
	if err != nil {
		return 0, false, err
	}
	v, ok := parseNS(b)
	if ok && c == '"' {
		p.note(DiagWarning, "quoted_number", "a timestamp or duration is a JSON string; read as its number", off)
	}
	return v, ok, nil
}

// args reads the args object, keeping the keys facts use; the
// record_shapes args (Input Dims, Input type, Concrete Inputs) go to the
// trace's shape table (see OpShapes).
func (p *parser) args(ev *Event) error {
	p.shape = OpShapes{Index: ev.Index}
	had := ev.Has
	ca := newCommArgs(ev.Index)
	err := p.argsBody(ev, &ca)
	p.addShapes(ev, p.shape, had)
	if ca.set() {
		p.t.Comms = append(p.t.Comms, ca)
		ev.Has |= HasComm
	}
	return err
}

func (p *parser) argsBody(ev *Event, ca *CommArgs) error {
	lx := p.lx
	if ok, err := lx.open('{'); !ok {
		return err
	}
	var seen, seenComm uint32
	for first := true; ; first = false {
		k, done, err := p.member(first, "args")
		if err != nil || done {
			return err
		}
		if ck := commKey(k); ck != 0 {
			if bit := commBit(k); seenComm&bit == 0 {
				seenComm |= bit
			} else {
				p.dupKey(k, "an event's args")
				ca.clear(ck)
			}
			if err := p.commArg(ck, ca); err != nil {
				return err
			}
			continue
		}
		a := argOf(k)
		if a != argOther && a != argCallStack {
			bit := uint32(1) << a
			if a == argDeviceID {
				bit = 1 << argDevice // both set Event.Device
			}
			if seen&bit == 0 {
				seen |= bit
			} else {
				p.dupKey(k, "an event's args")
				switch a {
				case argDims:
					p.shape.Dims, p.shape.LeadDim = 0, 0
					ev.Has &^= HasLeadDim
				case argTypes:
					p.shape.Types, p.shape.DType = 0, 0
				case argConcrete:
					p.shape.Concrete = 0
				default:
					p.clearArg(ev, a)
				}
			}
		}
		switch a {
		case argDims:
			p.t.RecordShapes = true
			if err := p.inputDims(ev); err != nil {
				return err
			}
			continue
		case argTypes:
			if err := p.dtype(); err != nil {
				return err
			}
			continue
		case argConcrete:
			if err := p.concrete(); err != nil {
				return err
			}
			continue
		case argCallStack:
			p.t.WithStack = true
		}
		flag, dst, dst32, side := intArg(a, ev)
		if flag == 0 && !side {
			if err := lx.skipValue(); err != nil {
				return err
			}
			continue
		}
		c, err := lx.peek()
		if err != nil {
			return err
		}
		off := lx.offset()
		if c != '-' && (c < '0' || c > '9') {
			if err := lx.skipValue(); err != nil {
				return err
			}
			continue // a string: ROCm runtime events write "stream": "0x0", "bytes": "256"
		}
		b, err := lx.number()
		if err != nil {
			return err
		}
		v, ok := parseInt(b)
		if !ok {
			p.badIntArg(a, b, off)
			continue
		}
		if side {
			p.memArg(ev.Index, a, v)
			ev.Has |= flag
			continue
		}
		if dst32 != nil {
			if v != int64(int32(v)) {
				continue
			}
			*dst32 = int32(v)
		} else {
			*dst = v
		}
		ev.Has |= flag
	}
}

// MemArgs are the byte-count args of one event, which only memcpy,
// memset and [memory] events carry.
type MemArgs struct {
	Index int32 // Event.Index of the event
	// DeviceType is args["Device Type"], c10::DeviceType (0 CPU, 1 CUDA,
	// ...); -1 when absent.
	DeviceType int32
	// Bytes is args.bytes (memcpy, memset) or args.Bytes ([memory],
	// negative for frees), when the event has HasBytes.
	Bytes int64
	// TotalAllocated is args["Total Allocated"] ([memory], bytes), when
	// the event has HasTotalAllocated.
	TotalAllocated int64
	TotalReserved  int64 // args["Total Reserved"] (bytes), when HasReserved
	HasReserved    bool
}

// memArg records arg a (one of intArg's side kinds) of event idx.
func (p *parser) memArg(idx int32, a arg, v int64) {
	m := p.t.MemArgs
	if n := len(m); n == 0 || m[n-1].Index != idx {
		p.t.MemArgs = append(m, MemArgs{Index: idx, DeviceType: -1})
	}
	m = p.t.MemArgs
	e := &m[len(m)-1]
	switch {
	case a == argBytes:
		e.Bytes = v
	case a == argTotalAllocated:
		e.TotalAllocated = v
	case a == argReserved:
		e.TotalReserved, e.HasReserved = v, true
	case a == argDeviceType && v == int64(int32(v)):
		e.DeviceType = int32(v)
	}
}

// BytesOf returns e's args.bytes (memcpy, memset) or args.Bytes
// ([memory]), when it has one.
func (t *Trace) BytesOf(e *Event) (int64, bool) {
	if e.Has&HasBytes == 0 {
		return 0, false
	}
	m, ok := t.MemArgsOf(e)
	return m.Bytes, ok
}

// MemArgsOf returns the MemArgs of e, if it has any.
func (t *Trace) MemArgsOf(e *Event) (MemArgs, bool) {
	k, ok := slices.BinarySearchFunc(t.MemArgs, e.Index, func(a MemArgs, i int32) int { return cmp.Compare(a.Index, i) })
	if !ok {
		return MemArgs{}, false
	}
	return t.MemArgs[k], true
}

// tracePhases are the ph values of the Trace Event Format (Chrome's
// "Trace Event Format" document, which Kineto writes).
const tracePhases = "BEXiICbnesStTfFpPNODMVvRc()"

// store classifies a parsed event and keeps it if facts can use it.
func (p *parser) store(r *rawEvent) {
	ev := &r.ev
	ev.Cat = CatNone
	if ev.CatName != 0 {
		ev.Cat = p.strCat[ev.CatName]
	}
	switch r.ph {
	case 'X':
		if r.badTime || !r.hasTS {
			p.drop("bad_time", "complete event without a usable ts/dur (missing, not a finite number, or past the nanosecond clock's range)", r.off)
			return
		}
		if !r.hasDur {
			ev.Dur = 0
			p.note(DiagWarning, "missing_dur", "complete event without dur: kept as lasting 0", r.off)
		}
		if ev.Dur < 0 {
			p.drop("negative_dur", "complete event with negative dur", r.off)
			return
		}
		if ev.Dur > maxDurNS {
			p.drop("absurd_dur", "event lasting more than 7 days", r.off)
			return
		}
		ev.Ph = PhComplete
	case 'B', 'E':
		if r.badTime || !r.hasTS {
			p.drop("bad_time", "B/E event without a usable ts (missing, not a finite number, or past the nanosecond clock's range)", r.off)
			return
		}
		// Matched per thread once all are read: files may list a B before
		// the E that ends the previous span at the same timestamp.
		if p.open == nil {
			p.open = make(map[[2]ID][]beEvent)
		}
		k := [2]ID{ev.PID, ev.TID}
		p.open[k] = append(p.open[k], beEvent{ev: *ev, end: r.ph == 'E', off: r.off})
		return
	case 'i', 'I':
		if r.badTime || !r.hasTS {
			p.drop("bad_time", "instant event without a usable ts (missing, not a finite number, or past the nanosecond clock's range)", r.off)
			return
		}
		ev.Ph = PhInstant
		ev.Dur = 0
		if p.t.strs[ev.Name] == "[memory]" {
			p.t.ProfileMemory = true
		}
	case 'C':
		if r.badTime || !r.hasTS {
			return
		}
		ev.Ph = PhCounter
		ev.Dur = 0
	default:
		// M metadata, s/f/t flows, async b/e/n and the other phases of
		// the format: read, not stored (facts link by args.correlation).
		if r.ph == 0 || strings.IndexByte(tracePhases, r.ph) < 0 {
			p.drop("unknown_phase", "event without a ph the trace format defines (X, B, E, i, C, M, flows, ...)", r.off)
		}
		return
	}
	if ev.Cat == CatPythonFunction {
		p.t.WithStack = true
	}
	if ev.Has&HasBytes != 0 && (ev.Cat == CatMemcpy || ev.Cat == CatMemset) {
		// A copy or fill moves a byte count; a negative one ([memory]
		// events free with one) would make memcpy_bytes a sum of nothing.
		if b, _ := p.t.BytesOf(ev); b < 0 {
			ev.Has &^= HasBytes
			p.note(DiagWarning, "negative_bytes", fmt.Sprintf("a memcpy or memset with args.bytes %d; ignored", b), r.off)
		}
	}
	p.keep(ev)
}

// keep stores an event. The first chunkEvents events go into a chunk;
// then, when the input's size is known, the store is sized once from the
// share of the input those events took (plus 10% and estimateSlack), and
// the shape table from their share carrying shapes; later events are
// appended in place, so finish needs no copy. Without a size, or when the
// estimate runs short, events go into fixed-size chunks (no regrowth
// copies) that finish joins.
func (p *parser) keep(ev *Event) {
	if p.local {
		p.cur = append(p.cur, *ev)
		return
	}
	if p.flat != nil {
		if len(p.flat) < cap(p.flat) {
			p.flat = append(p.flat, *ev)
			return
		}
		p.chunks, p.flat = append(p.chunks, p.flat), nil
	}
	if len(p.cur) == cap(p.cur) {
		if p.cur != nil {
			p.chunks = append(p.chunks, p.cur)
			p.cur = nil
		}
		if !p.sized && len(p.chunks) == 1 {
			p.sized = true
			if est := p.estimate(len(p.chunks[0])); est > 0 {
				// The shape table grows with the events that carry
				// record_shapes args: size it by their share so far.
				if n := len(p.t.Shapes); n > 0 {
					want := int(float64(n) / float64(len(p.chunks[0])) * float64(est))
					p.t.Shapes = append(hugemem.Make[OpShapes](0, want), p.t.Shapes...)
				}
				p.flat = append(hugemem.Make[Event](0, est), p.chunks[0]...)
				p.chunks = nil
				p.flat = append(p.flat, *ev)
				return
			}
		}
		p.cur = make([]Event, 0, p.firstChunk())
	}
	p.cur = append(p.cur, *ev)
}

// estimate extrapolates the event count from n events read so far, or 0
// when the input size is unknown or the input nearly read. The bytes
// those events took are the lexer's offset on a plain input read serially
// (exact), else the raw bytes read when the parallel read cut the chunk
// being joined, or read so far (gzip: compressed bytes, ahead of the
// parse by the read buffers).
func (p *parser) estimate(n int) int {
	if p.size <= 0 {
		return 0
	}
	read := p.readAt
	switch {
	case read > 0:
	case !p.t.Gzip && p.lx != nil:
		read = p.lx.offset() // exact: the serial read's position
	case p.raw != nil:
		read = p.raw.n.Load()
	}
	if read <= 0 || read >= p.size {
		return 0
	}
	return int(float64(n)*float64(p.size)/float64(read)*1.1) + estimateSlack
}

const chunkEvents = 1 << 15

// estimateSlack is the room the sized store keeps beyond its 10% margin,
// for an input whose first events are its sparsest.
const estimateSlack = 4096

// firstChunk is the capacity of the first chunk of events: chunkEvents,
// or fewer for an input too small to hold that many (an event takes 40
// bytes or more; see inflatedSize for gzip), so a small trace does not
// clear megabytes.
func (p *parser) firstChunk() int {
	if p.sized || len(p.chunks) > 0 || p.size <= 0 {
		return chunkEvents
	}
	return int(min(int64(chunkEvents), inflatedSize(p.size, p.t.Gzip)/40+16))
}

func (p *parser) drop(reason, msg string, off int64) {
	p.t.Health.Dropped++
	p.note(DiagDropped, reason, msg, off)
}

// catOf is the category a "cat" value names (an absent "cat" is CatNone,
// decided by the caller).
func catOf(name string) Cat {
	if c, ok := catByName[name]; ok {
		return c
	}
	return CatOther
}

// beEvent is a B or E event awaiting matching.
type beEvent struct {
	ev  Event
	end bool
	off int64
}

// matchBeginEnd pairs B and E events per (pid, tid) as a stack, in time
// order; at equal timestamps an E closes the open span before a B opens
// the next one (back-to-back spans), then file order.
func (p *parser) matchBeginEnd() {
	keys := make([][2]ID, 0, len(p.open))
	for k := range p.open {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]ID) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		evs := p.open[k]
		slices.SortStableFunc(evs, func(a, b beEvent) int {
			if c := cmp.Compare(a.ev.TS, b.ev.TS); c != 0 {
				return c
			}
			switch {
			case a.end && !b.end:
				return -1
			case !a.end && b.end:
				return 1
			}
			return 0
		})
		var stack []beEvent
		for _, x := range evs {
			if !x.end {
				stack = append(stack, x)
				continue
			}
			if len(stack) == 0 {
				p.note(DiagWarning, "unmatched_end", "E event without a matching B on its thread; ignored", x.off)
				continue
			}
			b := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			b.ev.Dur = x.ev.TS - b.ev.TS
			if b.ev.Dur > maxDurNS {
				p.drop("absurd_dur", "event lasting more than 7 days", b.off)
				continue
			}
			b.ev.Ph = PhComplete
			p.keep(&b.ev)
		}
		for _, b := range stack {
			p.drop("unclosed_begin", "B event without a matching E (the trace may be cut short)", b.off)
		}
	}
	p.open = nil
}

// dtype reads args["Input type"], an array of strings such as
// ["float", "float", "", "Scalar"], into the shape table and keeps the
// first tensor dtype.
func (p *parser) dtype() error {
	s, err := p.stringList(func(b []byte, off int64) {
		if p.shape.DType == 0 && isTensorType(b) {
			p.shape.DType = p.str(b, off)
		}
	})
	p.shape.Types = s
	return err
}

// isTensorType reports whether an Input type entry names a tensor dtype:
// not empty (a non-tensor input), not a Scalar or a list.
func isTensorType(b []byte) bool {
	switch string(b) {
	case "", "Scalar", "ScalarList", "TensorList", "GenericList":
		return false
	}
	return true
}

// concrete reads args["Concrete Inputs"], an array of strings ("", "[2,
// 2]", "False", "1"), into the shape table.
func (p *parser) concrete() error {
	s, err := p.stringList(nil)
	p.shape.Concrete = s
	return err
}

// stringList reads an array of strings as shape-table text, entries joined
// by "|" ("?" for an entry that is not a string), calling each (when not
// nil) with every string and its offset.
func (p *parser) stringList(each func(b []byte, off int64)) (Str, error) {
	lx := p.lx
	off0 := lx.offset()
	p.shapeBegin()
	err := p.items(func(c byte) error {
		p.shapeSep('|')
		if c != '"' {
			p.shapeText("?")
			return lx.skipValue()
		}
		off := lx.offset()
		b, err := lx.str()
		if err != nil {
			return err
		}
		p.shapeBytes(b)
		if each != nil {
			each(b, off)
		}
		return nil
	})
	return p.shapeStr(off0), err
}

// inputDims reads args["Input Dims"], a list of shapes ([[32, 3, 224,
// 224], [], ...]), keeping the leading dimension of the first non-empty
// shape in the shape table's LeadDim and the whole list in the shape table as compact
// text ("[32,3,224,224],[],?": "?" for an entry or size that is not a
// list or a number).
func (p *parser) inputDims(ev *Event) error {
	lx := p.lx
	if c, err := lx.peek(); err == nil && c == '[' && p.dimsFast(ev) {
		return nil
	}
	off0 := lx.offset()
	p.shapeBegin()
	err := p.items(func(c byte) error {
		p.shapeSep(',')
		if c != '[' {
			p.shapeText("?")
			return lx.skipValue()
		}
		p.shapeText("[")
		first := true
		err := p.items(func(c byte) error {
			if !first {
				p.shapeText(",")
			}
			first = false
			if c != '-' && (c < '0' || c > '9') {
				p.shapeText("?")
				return lx.skipValue()
			}
			b, err := lx.number()
			if err != nil {
				return err
			}
			p.shapeBytes(b)
			if ev.Has&HasLeadDim != 0 {
				return nil
			}
			if v, ok := parseInt(b); ok && v == int64(int32(v)) {
				p.shape.LeadDim = int32(v)
				ev.Has |= HasLeadDim
			}
			return nil
		})
		p.shapeText("]")
		return err
	})
	p.shape.Dims = p.shapeStr(off0)
	return err
}

// dimsFast is inputDims for the usual value, a list of flat lists of
// integers ([[32, 3, 224, 224], [], [1]]) that lies in the window: one
// pass over the bytes copies them without whitespace and outer brackets,
// which is inputDims's compact text. It reports false, consuming nothing,
// for anything else (nesting, null entries, fractions, stray commas, the
// window ending first), which inputDims then reads in full.
func (p *parser) dimsFast(ev *Event) bool {
	lx := p.lx
	b := lx.buf[lx.pos+1 : lx.end] // after the outer '['
	d, ok := scanDims(b)
	if !ok {
		return false
	}
	out := b[:d.n]
	if d.ws {
		out = p.compactDims(out)
	}
	off := lx.offset()
	lx.pos += d.n + 2
	s := Str(0)
	if len(out) > 0 && len(out) <= maxShapeText {
		s = p.str(out, off)
	}
	p.shape.Dims = s
	if d.hasLead && ev.Has&HasLeadDim == 0 {
		p.shape.LeadDim, ev.Has = d.lead, ev.Has|HasLeadDim
	}
	return true
}

// compactDims returns dims text without its whitespace, in p.shapeBuf.
func (p *parser) compactDims(b []byte) []byte {
	out := p.shapeBuf[:0]
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			out = append(out, c)
		}
	}
	p.shapeBuf = out
	return out
}

// dimsScan is what scanDims found: the outer list's closing ']' at b[n],
// whether whitespace was seen, and the first size that fits an int32.
type dimsScan struct {
	n       int
	ws      bool
	lead    int32
	hasLead bool
}

// scanDims scans a list of flat lists of integers from just after its
// opening '['; ok is false for anything else or when b ends first.
func scanDims(b []byte) (d dimsScan, ok bool) {
	// Where we are: in the outer list (depth 1) or a shape (depth 2), and
	// whether an item may end the list (after '[' or an item) or is
	// required (after ',').
	depth, needItem, afterItem := 1, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '[':
			if depth != 1 || afterItem {
				return d, false
			}
			depth, needItem = 2, false
		case c == ']':
			if needItem {
				return d, false
			}
			if depth == 2 {
				depth, afterItem = 1, true
				continue
			}
			d.n = i
			return d, true
		case c == ',':
			if !afterItem {
				return d, false
			}
			needItem, afterItem = true, false
		case c == '-' || c >= '0' && c <= '9':
			if depth != 2 || afterItem {
				return d, false
			}
			k := i
			if c == '-' {
				k++
			}
			j := k
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			if j == k || j-k > 1 && b[k] == '0' || j == len(b) || isNumByte(b[j]) {
				// A fraction or exponent, no digits, a leading zero (not
				// JSON: inputDims lists the repair), or the window ends.
				return d, false
			}
			if !d.hasLead {
				if v, ok := parseInt(b[i:j]); ok && v == int64(int32(v)) {
					d.lead, d.hasLead = int32(v), true
				}
			}
			i = j - 1
			needItem, afterItem = false, true
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			d.ws = true
		default:
			return d, false
		}
	}
	return d, false
}
