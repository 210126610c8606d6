package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// Limits that mark corrupt records (docs/ARCHITECTURE.md "Fine print").
const (
	maxDurNS          = int64(7 * 24 * 3600 * 1e9) // events lasting more than 7 days are corrupt
	sentinelHorizonNS = int64(1e9)                 // ts 0 is a sentinel when other events are later than 1 s
)

// ErrNotKineto is wrapped by Parse when the input is JSON but not a
// Chrome/Kineto trace (for example a PyTorch Execution Trace).
var ErrNotKineto = errors.New("not a Kineto trace")

// ErrChanged is wrapped by Parse when the input changed while it was
// read: a file shorter after the read than when it began, or a stream of
// a known size that ended before it.
var ErrChanged = errors.New("the file changed while it was read")

// Parse reads one trace from r (plain JSON or gzip, detected by magic
// bytes). name labels errors and diagnostics. Errors are "parse trace NAME:
// ..." and name the byte offset in the uncompressed stream.
//
// A large input is read on GOMAXPROCS cores (see parallelEvents); the
// result is the same as the serial read's in every case.
func Parse(r io.Reader, name string) (*Trace, error) {
	return ParseContext(context.Background(), r, name)
}

// ParseContext is Parse, stopped once ctx is done: the read looks at ctx
// before each read of the input and between the parallel read's chunks,
// and then fails with "parse trace NAME: ...: %w" of context.Cause(ctx). A
// read that blocks (a pipe nobody writes to) is not interrupted.
func ParseContext(ctx context.Context, r io.Reader, name string) (*Trace, error) {
	return parseOpts(ctx, r, name, parOptions{})
}

func parseOpts(ctx context.Context, r io.Reader, name string, opt parOptions) (*Trace, error) {
	t, err := parseInput(ctx, r, name, opt)
	if ctx.Err() != nil {
		// A cancelled read reads as cut short: that is no trace.
		return nil, fmt.Errorf("parse trace %s: %w", name, context.Cause(ctx))
	}
	return t, err
}

// A trace file is read with plain reads into the lexer's window and the
// parallel read's chunks, never through a memory mapping: on a virtual
// machine, reading a mapped file took 1.45x the CPU of read() for the
// parse and 1.28x for parse and facts (BenchmarkParse/200MB and
// BenchmarkParseFacts/200MB, one core, medians of five rounds run in
// turn), the page-table and TLB work of the mapping costing more than the
// kernel's copy.

// parseInput reads r.
func parseInput(ctx context.Context, r io.Reader, name string, opt parOptions) (*Trace, error) {
	size := inputSize(r)
	in := r
	if ctx.Done() != nil {
		in = ctxReader{ctx, r}
	}
	raw := &rawCounter{r: in}
	br := bufio.NewReaderSize(raw, readBuffer(size))
	src, gz, err := decompress(br)
	if err != nil {
		return nil, fmt.Errorf("parse trace %s: %w", name, err)
	}
	if ra, ok := src.(*readAhead); ok {
		defer ra.Close()
	}
	p := newParser(src, name)
	p.t.Gzip = gz
	p.raw, p.size = raw, size
	p.lx.buf = make([]byte, windowFor(p.size, gz))
	p.ctx = ctx
	p.par = opt
	if p.par.workers <= 0 {
		p.par.workers = defaultWorkers(p.size, p.t.Gzip)
	}
	if err := p.run(); err != nil {
		if gz {
			// The reader's offsets count the stream it parses.
			return nil, fmt.Errorf("parse trace %s (gzip: byte offsets are in the uncompressed JSON): %w", name, err)
		}
		return nil, fmt.Errorf("parse trace %s: %w", name, err)
	}
	if err := changedWhileRead(r, size, raw); err != nil {
		return nil, fmt.Errorf("parse trace %s: %w", name, err)
	}
	if len(p.t.Events) == 0 {
		why := "no timed events"
		if p.t.Health.Repaired {
			why += " before the damage"
		}
		return nil, fmt.Errorf("parse trace %s: %s (%d events read: metadata, flows or dropped records only)", name, why, p.t.Health.EventsRead)
	}
	return p.t, nil
}

type parser struct {
	t    *Trace
	lx   *lexer
	name string
	ctx  context.Context // the read stops once it is done (ParseContext)
	diag map[string]int  // reason -> index into Health.Diagnostics

	open    map[[2]ID][]beEvent // B and E events awaiting matching, per (pid, tid)
	nEvents int32
	fastN   int64 // events the fast path read (fast.go)
	stop    bool  // input ended early; keep what was read
	evDup   bool  // the event being read has a repeated key, listed (dupKey)
	chunks  [][]Event
	keyBuf  []byte   // a key copied out of the window (see member)
	keyTab  keyTable // the fast path's keys (keys.go)
	recent  [1 << recentBits]recentString
	strCat  []Cat // category of each interned string, as if it were a "cat"

	shape    OpShapes // the current event's record_shapes args
	shapeBuf []byte   // their compact text, built while reading
	shapeN   int      // entries in it
	shapeCut bool     // the text grew past maxShapeText

	// Event store sizing (see keep): raw bytes read so far, the input's
	// size when known, and the one flat store sized from them.
	raw    *rawCounter
	size   int64
	flat   []Event
	sized  bool // the sizing decision was made
	cur    []Event
	readAt int64 // raw bytes read when the chunk being joined was cut (0: use raw)

	// Parallel read (parallel.go): the options, whether it was tried, and
	// the join's renumbering tables.
	par        parOptions
	parDone    bool
	parTries   int
	parRetryAt int64 // the parallel read is not tried again before this offset
	strMap     []Str
	idMap      []ID

	// A chunk parser's local tables (local is true): per local string its
	// raw key, the notes its first use raised and that use's offset; per
	// local string id its raw key; and whether a numeric id fell where
	// string ids are numbered.
	local   bool
	keys    []string
	strNote []uint8
	strOff  []int64
	idKeys  []string
	idClash bool
}

func newParser(r io.Reader, name string) *parser {
	p := &parser{
		t: &Trace{
			Path:   name,
			intern: make(map[string]Str, 1024),
			idOf:   make(map[string]ID),
		},
		lx:   newLexer(r),
		name: name,
		ctx:  context.Background(),
		diag: make(map[string]int),
	}
	p.t.strs = append(p.t.strs, "")
	p.strCat = append(p.strCat, CatOther)
	p.t.intern[""] = 0
	p.lx.repair = func(reason, msg string, off int64) { p.note(DiagRepair, reason, msg, off) }
	return p
}

// note records a diagnostic, aggregating by reason; Offset stays the first.
func (p *parser) note(kind DiagKind, reason, msg string, off int64) {
	h := &p.t.Health
	if i, ok := p.diag[reason]; ok {
		h.Diagnostics[i].Count++
		return
	}
	p.diag[reason] = len(h.Diagnostics)
	h.Diagnostics = append(h.Diagnostics, Diagnostic{Kind: kind, Reason: reason, Message: msg, Offset: off, Count: 1})
	if kind == DiagRepair {
		h.Repaired = true
	}
}

func (p *parser) str(b []byte, off int64) Str {
	slot := &p.recent[recentSlot(b)]
	if slot.text == string(b) {
		return slot.id
	}
	if s, ok := p.t.intern[string(b)]; ok {
		slot.text, slot.id = p.t.strs[s], s
		if slot.text != string(b) { // repaired text: cache only by the raw bytes
			slot.text, slot.id = "", 0
		}
		return s
	}
	key := string(b)
	text := key
	var notes uint8
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		notes |= noteBadUTF8
	}
	// Raw control bytes are invalid JSON; escaped ones (\u001b) are valid
	// text and kept (renderers strip or escape them).
	if !p.lx.escaped && strings.IndexFunc(text, isControl) >= 0 {
		text = strings.Map(func(r rune) rune {
			if isControl(r) {
				return '\uFFFD'
			}
			return r
		}, text)
		notes |= noteControl
	}
	if p.local {
		// A chunk's first use may not be the file's: the join notes it.
		p.keys = append(p.keys, key)
		p.strNote = append(p.strNote, notes)
		p.strOff = append(p.strOff, off)
	} else {
		if notes&noteBadUTF8 != 0 {
			p.note(DiagRepair, "bad_utf8", msgBadUTF8, off)
		}
		if notes&noteControl != 0 {
			p.note(DiagRepair, "control_char", msgControl, off)
		}
	}
	s := Str(len(p.t.strs))
	p.t.strs = append(p.t.strs, text)
	p.strCat = append(p.strCat, catOf(text))
	p.t.intern[key] = s
	if text == key {
		slot.text, slot.id = text, s
	}
	return s
}

// recentString is one slot of parser.recent, a direct-mapped cache in
// front of the intern map: names and categories repeat from event to
// event, and comparing with one candidate is cheaper than hashing into
// the map. An empty slot holds "" -> 0, which is also the right answer.
type recentString struct {
	text string
	id   Str
}

// recentSlot hashes a string's length and its first and last 8 bytes.
func recentSlot(b []byte) int {
	h := uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b) * 0x9E3779B97F4A7C15
		h ^= binary.LittleEndian.Uint64(b[len(b)-8:]) * 0xC2B2AE3D27D4EB4F
	} else {
		for _, c := range b {
			h = h*31 + uint64(c)
		}
		h *= 0x9E3779B97F4A7C15
	}
	return int(h >> (64 - recentBits))
}

const recentBits = 8

func isControl(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' }

func (p *parser) id(b []byte) ID {
	if v, ok := plainInt(b); ok {
		return ID(v)
	}
	if v, ok := parseInt(b); ok && len(b) > 0 && b[0] != '+' && !bytes.ContainsAny(b, ".eE") {
		if p.local && ID(v) >= StrIDBase && ID(v) < strIDClash {
			p.idClash = true // the join would renumber it: read serially
		}
		return ID(v)
	}
	if id, ok := p.t.idOf[string(b)]; ok {
		return id
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	id := StrIDBase + ID(len(p.t.ids))
	p.t.ids = append(p.t.ids, s)
	p.t.idOf[string(b)] = id
	if p.local {
		p.idKeys = append(p.idKeys, string(b))
	}
	return id
}

func (p *parser) run() error {
	lx := p.lx
	c, err := lx.peek()
	if err == errEOF {
		if lx.rerr != nil {
			return fmt.Errorf("byte 0: %w", lx.rerr)
		}
		return fmt.Errorf("byte 0: empty file")
	}
	if c == 0xEF { // a UTF-8 byte order mark is EF BB BF
		for lx.end-lx.pos < 3 {
			if _, ok := lx.fill(lx.pos); !ok {
				break
			}
		}
		if lx.end-lx.pos >= 3 && lx.buf[lx.pos+1] == 0xBB && lx.buf[lx.pos+2] == 0xBF {
			lx.pos += 3
			p.note(DiagRepair, "bom", "UTF-8 byte order mark skipped", 0)
			if c, err = lx.peek(); err != nil {
				return fmt.Errorf("byte 3: empty file")
			}
		}
	}
	switch c {
	case '[':
		err = p.events(true)
	case '{':
		err = p.topObject()
	default:
		return fmt.Errorf("%w: byte %d: expected '{' or '[', found %s", ErrNotKineto, lx.offset(), quoteByte(c))
	}
	if err != nil {
		return err
	}
	if !p.stop {
		p.trailer()
	}
	if read := p.raw.n.Load(); p.size > 0 && read > p.size {
		// Still being written: what was read is used, and a cut at its
		// end is the repair the read lists; this says why. Noted before
		// finish, which sorts the diagnostics.
		p.note(DiagWarning, "grew_while_read", fmt.Sprintf("the file grew while it was read (%d bytes when the read began, %d read): it was still being written", p.size, read), -1)
	}
	p.finish()
	return nil
}

// trailer checks what follows the top-level value: only whitespace, and a
// compressed stream that ends cleanly.
func (p *parser) trailer() {
	lx := p.lx
	c, err := lx.peek()
	if err == nil {
		p.note(DiagRepair, "trailing_data", fmt.Sprintf("data after the end of the trace (%s) ignored: is a second trace concatenated? Pass each trace as its own file", quoteByte(c)), lx.offset())
		// Read it all, so that Trace.Bytes is the input's size however the
		// input ends up in the window (streamed, or mapped whole).
		lx.pos = lx.end
		for !lx.eof {
			lx.fill(lx.pos)
			lx.pos = lx.end
		}
	}
	if errors.Is(lx.rerr, gzip.ErrChecksum) {
		// The JSON parsed whole, but the CRC-32 of what was inflated is not
		// the one the compressor wrote: some bytes are damaged, and where
		// cannot be told (a flipped digit still parses).
		p.note(DiagRepair, "gzip_checksum", "the gzip checksum (CRC-32) of the inflated data does not match its trailer: some bytes are damaged, where cannot be told; figures may be wrong", lx.offset())
	} else if lx.rerr != nil {
		// The JSON is complete, so every event was read; what failed is the
		// gzip trailer or bytes after the last member.
		p.note(DiagWarning, "gzip_trailer", "compressed stream ends badly after the complete JSON ("+lx.rerr.Error()+"): trailing bytes or a cut trailer; the trace data is complete", lx.offset())
	}
}

// truncated records that input ended early and everything read so far is kept.
func (p *parser) truncated(where string) {
	msg := "input ends inside " + where + "; events read so far are kept, the rest is missing"
	if p.lx.rerr != nil {
		msg += " (" + p.lx.rerr.Error() + ")"
	}
	p.note(DiagRepair, "truncated", msg, p.lx.offset())
}

func (p *parser) topObject() error {
	lx := p.lx
	lx.pos++ // '{'
	sawEvents, sawNodes := false, false
	// The metadata keys read (bits of topKeys), and the Devices the last
	// deviceProperties and computeProperties added, [from, to), for the
	// repeated keys: the last value is the trace's (see dupKey).
	var seen uint8
	var devAt [2][2]int
	for first := true; ; first = false {
		c, err := lx.peek()
		if err == errEOF {
			return p.topErr(err, sawEvents, sawNodes)
		}
		if c == '}' {
			lx.pos++
			break
		}
		if !first {
			if c != ',' {
				return lx.syntaxErr(fmt.Sprintf("expected ',' or '}' in the top-level object, found %s", quoteByte(c)))
			}
			lx.pos++
			if c, err = lx.peek(); err == nil && c == '}' {
				p.note(DiagRepair, "trailing_comma", "trailing comma removed", lx.offset()-1)
				lx.pos++
				break
			}
		}
		keyOff := lx.offset()
		k, err := lx.str()
		if err != nil {
			return p.topErr(err, sawEvents, sawNodes)
		}
		key := string(k)
		if err := lx.expect(':'); err != nil {
			return p.topErr(err, sawEvents, sawNodes)
		}
		if bit := keyBit(topKeys, key); seen&bit != 0 {
			p.noteDup([]byte(key), "the top-level object")
		} else {
			seen |= bit
		}
		switch key {
		case "traceEvents":
			c, perr := lx.peek()
			if sawEvents {
				p.note(DiagRepair, "duplicate_trace_events", "the trace has more than one \"traceEvents\" key: the events of every traceEvents array are read, in file order, as one trace (a JSON parser keeps only the last); if two traces were joined, pass each as its own file", keyOff)
			}
			switch {
			case perr != nil:
				err = perr
			case c == '[':
				sawEvents = true
				err = p.events(false)
			case sawEvents:
				err = lx.skipValue() // not an array: no events
			default:
				return fmt.Errorf("%w: byte %d: traceEvents is not an array", ErrNotKineto, lx.offset())
			}
		case "deviceProperties", "computeProperties":
			i := 0
			if key == "computeProperties" {
				i = 1
			}
			if r := devAt[i]; r[1] > r[0] { // repeated: its last copy replaces the earlier
				p.t.Devices = slices.Delete(p.t.Devices, r[0], r[1])
				if o := &devAt[1-i]; o[0] >= r[1] {
					o[0], o[1] = o[0]-(r[1]-r[0]), o[1]-(r[1]-r[0])
				}
			}
			from := len(p.t.Devices)
			err = p.deviceProps()
			devAt[i] = [2]int{from, len(p.t.Devices)}
		case "distributedInfo":
			err = p.distInfo()
		case "baseTimeNanoseconds":
			p.t.BaseTimeNS, err = p.intValue()
		case "record_shapes", "profile_memory", "with_stack":
			var on bool
			on, err = p.flagValue()
			switch key {
			case "record_shapes":
				p.t.RecordShapes = p.t.RecordShapes || on
			case "profile_memory":
				p.t.ProfileMemory = p.t.ProfileMemory || on
			case "with_stack":
				p.t.WithStack = p.t.WithStack || on
			}
		case "nodes":
			sawNodes = true
			err = lx.skipValue()
		default:
			err = lx.skipValue()
		}
		if err != nil {
			return p.topErr(err, sawEvents, sawNodes)
		}
		if p.stop {
			return nil
		}
	}
	if !sawEvents {
		return p.notKineto(sawNodes)
	}
	return nil
}

// topKeys are the top-level keys whose repeats topObject lists as
// duplicate_key (bit i: the i-th), the last value being the trace's. The
// profiler flags (record_shapes, ...) are not listed: a flag is on when
// any copy of it, or the events, say so.
//
// A repeated traceEvents is listed as duplicate_trace_events, at the
// offset of the repeated key, and unlike JSON parsers, which keep the
// last array, the reader reads the events of every array, in file order,
// as one trace. It streams each array into the trace and cannot take an
// earlier one back without a second read; and a file with two arrays is
// more likely two traces joined, or a trace followed by an empty array
// (which the last array alone would turn into "no events"), than one
// whose last array alone is meant. The repair says so and marks the
// trace as repaired, so reports say its figures may be off. A repeated
// traceEvents whose value is not an array adds no events.
const topKeys = "|deviceProperties|computeProperties|distributedInfo|baseTimeNanoseconds|"

func (p *parser) topErr(err error, sawEvents, sawNodes bool) error {
	if err == errEOF {
		if sawNodes {
			return p.notKineto(sawNodes)
		}
		if !sawEvents {
			msg := "input ends before the traceEvents array (the file is cut short)"
			if p.lx.rerr != nil {
				msg += ": " + p.lx.rerr.Error()
			}
			return fmt.Errorf("byte %d: %s", p.lx.offset(), msg)
		}
		p.truncated("the top-level object")
		return nil
	}
	return err
}

func (p *parser) notKineto(sawNodes bool) error {
	if sawNodes {
		return fmt.Errorf("%w: it has top-level \"nodes\" (a PyTorch Execution Trace); pass the Kineto trace that torch.profiler writes", ErrNotKineto)
	}
	if p.lx.eof && p.lx.offset() >= p.lx.base+int64(p.lx.end) && p.lx.rerr != nil {
		return fmt.Errorf("byte %d: %w", p.lx.offset(), p.lx.rerr)
	}
	return fmt.Errorf("%w: no \"traceEvents\" array", ErrNotKineto)
}

// intValue reads an integer value (number or numeric string).
func (p *parser) intValue() (int64, error) {
	lx := p.lx
	c, err := lx.peek()
	if err != nil {
		return 0, err
	}
	off := lx.offset()
	var b []byte
	if c == '"' {
		b, err = lx.str()
	} else if c == '-' || (c >= '0' && c <= '9') {
		b, err = lx.number()
	} else {
		return 0, lx.skipValue()
	}
	if err != nil {
		return 0, err
	}
	v, ok := parseInt(b)
	if !ok {
		p.note(DiagWarning, "bad_int", fmt.Sprintf("expected an integer, found %q; ignored", b), off)
	}
	return v, nil
}

func (p *parser) flagValue() (bool, error) {
	lx := p.lx
	c, err := lx.peek()
	if err != nil {
		return false, err
	}
	switch {
	case c == 't':
		w, err := lx.word()
		return string(w) == "true", err
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := lx.number()
		v, _ := parseInt(b)
		return v != 0, err
	}
	return false, lx.skipValue()
}

// events reads the array of trace events (the '[' is next).
func (p *parser) events(bare bool) error {
	lx := p.lx
	lx.pos++ // '['
	for n := 0; ; n++ {
		c, err := lx.peek()
		if err == errEOF {
			p.truncated("the event array")
			p.stop = true
			return nil
		}
		if c == ']' {
			lx.pos++
			return nil
		}
		if n > 0 {
			if c != ',' {
				return lx.syntaxErr(fmt.Sprintf("expected ',' or ']' after event %d, found %s", n-1, quoteByte(c)))
			}
			lx.pos++
			c, err = lx.peek()
			if err == errEOF {
				p.truncated("the event array")
				p.stop = true
				return nil
			}
			if c == ']' {
				p.note(DiagRepair, "trailing_comma", "trailing comma removed", lx.offset()-1)
				lx.pos++
				return nil
			}
		}
		if c != '{' {
			if bare && n == 0 {
				return fmt.Errorf("%w: byte %d: array elements are not event objects", ErrNotKineto, lx.offset())
			}
			return lx.syntaxErr(fmt.Sprintf("event %d: expected an object, found %s", n, quoteByte(c)))
		}
		if p.par.workers > 1 && !p.parDone && lx.offset() >= p.parRetryAt {
			// The rest of the array on all cores; the serial loop goes on
			// from the '{' of the first event not joined, and past a chunk
			// the workers could not read (a seam inside a string, damage)
			// it tries again.
			joined, retry := p.parallelEvents()
			n += joined
			p.parTries++
			if retry < 0 || p.parTries >= parMaxTries {
				p.parDone = true
			}
			p.parRetryAt = retry
			if c, err = lx.peek(); err != nil || c != '{' {
				return lx.syntaxErr("parallel read resumed off an event start") // seams are '{' bytes
			}
		}
		start := lx.offset()
		if err := p.event(); err != nil {
			if err == errEOF {
				p.truncated(fmt.Sprintf("event %d (started at byte %d); the partial event is dropped", n, start))
				p.stop = true
				return nil
			}
			return fmt.Errorf("event %d: %w", n, err)
		}
	}
}

// readBuffer is the input buffer for an input of size bytes (0: unknown):
// 64 KiB, or the input and a little when smaller.
func readBuffer(size int64) int {
	if size <= 0 || size >= 64<<10 {
		return 64 << 10
	}
	return int(size) + 16
}

// ctxReader fails a read once its context is done (ParseContext on a
// stream).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(b)
}

// rawCounter counts the bytes read from the input (compressed bytes for
// gzip), to size the event store from the share of the input read.
// For gzip it is read by the decompressor's read-ahead goroutine while the
// parser reads the count, hence the atomic.
type rawCounter struct {
	r   io.Reader
	n   atomic.Int64
	eof atomic.Bool // r returned io.EOF
}

func (c *rawCounter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// changedWhileRead is the error (wrapping ErrChanged) for an input of a
// known size that is shorter after the read than when it began (a trace
// being rewritten, or a file cut short), or whose stream ended before
// that size (a file:// or object-store reader of such a file): what was
// read is then no trace to judge, not a truncated one to repair. Sizes
// are raw (compressed) bytes; an input of unknown size passes.
func changedWhileRead(r io.Reader, size int64, raw *rawCounter) error {
	if size <= 0 {
		return nil
	}
	read := raw.n.Load()
	if now := inputSize(r); now < size {
		return fmt.Errorf("byte %d: %w (%d bytes when the read began, %d now): read it again once it is complete", min(read, now), ErrChanged, size, now)
	}
	if raw.eof.Load() && read < size {
		return fmt.Errorf("byte %d: %w (the input ended there, of the %d bytes it had when the read began): read it again once it is complete", read, ErrChanged, size)
	}
	return nil
}

// inputSize is the input's size in bytes when it can tell (a file, or a
// reader with a Size method), else 0.
func inputSize(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Size() int64 }:
		return v.Size()
	case interface{ Stat() (os.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}
