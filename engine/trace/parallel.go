package trace

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// Parallel parse of the traceEvents array.
//
// When the reader reaches the first event of the array, the rest of the
// input is cut into chunks at likely event boundaries ("seams": the '{' of
// an event after `}` `,`), chunks are parsed on GOMAXPROCS workers into
// chunk-local stores (strings, ids, events, shapes, diagnostics), and the
// main goroutine joins them in file order: local string and id numbers are
// renumbered into the trace's tables in order of first appearance, event
// indexes are shifted, diagnostics are merged by reason (first offset,
// counts added). A seam is proven by the chunk before it: that chunk's
// parse, started at a proven seam, must end exactly at the chunk's end,
// right after a ',' between events. The first chunk that does not (a seam
// inside a string, the end of the array, damage, truncation) and
// everything after it are read by the serial reader, from that chunk's
// proven start, so the result is the serial one in every case.
//
// The bytes of chunks not yet joined are held: parInflightBytes, plus the
// seam search's growth for one huge event, capped at parMaxChunk.

// minEventBytes is about the smallest Kineto event's JSON,
// {"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1}: a chunk holds at
// most its size over this many events (more only grow the store).
const minEventBytes = 64

const (
	// parChunk is the bytes per chunk; parMaxChunk caps the growth of a
	// chunk that finds no seam (one huge event): beyond it the rest is
	// read serially.
	parChunk    = 4 << 20
	parMaxChunk = 16 << 20
	// parMinSize: inputs of a known size below it are read serially.
	parMinSize = 2 * parChunk
	// parMaxInflight caps the chunks read but not yet joined, and
	// parInflightBytes their bytes (their local stores take about as
	// much again).
	parMaxInflight = 32
	// parMaxTries caps the parallel reads of one array: each chunk the
	// workers cannot read ends one, and the next starts after it.
	parMaxTries      = 64
	parInflightBytes = 32 << 20
)

// parOptions sets up the parallel read; zero values take the defaults.
type parOptions struct {
	workers int  // 0: GOMAXPROCS; 1: serial
	chunk   int  // 0: parChunk
	general bool // no fast path (fast.go): the tests' reference read
}

// parChunkSize is the chunk size for an input of size bytes (0: unknown)
// read by w workers: the chunks in flight (parInflight) share
// parInflightBytes, and a known input makes 8 chunks per worker or more;
// at most parChunk, at least 256 KiB.
func parChunkSize(size int64, w int) int {
	c := min(parChunk, parInflightBytes/parInflight(w))
	if size > 0 {
		c = min(c, int(size/int64(8*w)))
	}
	return max(256<<10, c)
}

// parInflight is how many chunks are read ahead of the join: two per
// worker, so each has the next while the join waits on the oldest.
func parInflight(w int) int { return min(parMaxInflight, 2*w) }

// chunk is one range of the event array and, once parsed, its local store.
type chunk struct {
	data  []byte // the bytes, from a seam to the next (or to the end)
	off   int64  // stream offset of data[0]
	rawAt int64  // raw input bytes read when the chunk was cut (store sizing)
	done  chan struct{}

	// Results, valid after done is closed.
	clean      bool     // the parse ended exactly at the end of data, after a ','
	keys       []string // local string number -> raw (decoded) text, as interned
	strs       []string // local string number -> text (repaired)
	strNote    []uint8  // local string number -> notes its first use raised
	strOff     []int64  // local string number -> offset of its first use
	idKeys     []string // local string id -> raw text
	ids        []string // local string id -> text
	events     []Event
	shapes     []OpShapes
	memArgs    []MemArgs
	comms      []CommArgs
	open       map[[2]ID][]beEvent
	diags      []Diagnostic
	nEvents    int32
	eventsRead int
	dropped    int
	recShapes  bool
	withStack  bool
	profMem    bool
}

// Notes str raises on the first use of a string (bits of chunk.strNote).
const (
	noteBadUTF8 uint8 = 1 << iota
	noteControl
)

const (
	msgBadUTF8  = "invalid UTF-8 in a string replaced with U+FFFD"
	msgControl  = "raw control byte in a string replaced with U+FFFD"
	strIDClash  = StrIDBase + 1<<32 // numeric ids below it would be taken for string ids when joined
	maxLocalIDs = 1 << 32
)

// parallelEvents reads the event array from the '{' of its next event on
// worker goroutines and joins what they read. It returns the number of
// events joined and leaves the lexer at the '{' of the next event (the
// first byte not joined), reading the held bytes and then the rest of the
// input, so the serial reader continues from there. retry is the end of
// the chunk the workers could not read, after which a new parallel read
// may start, or -1 when the input has no more chunks.
func (p *parser) parallelEvents() (joined int, retry int64) {
	lx := p.lx
	if lx.eof {
		return 0, -1 // the whole input is in the window: nothing to share
	}
	w := p.par.workers
	size := p.size
	if p.t.Gzip {
		size = 0 // the input size is compressed bytes
	}
	csize := p.par.chunk
	if csize <= 0 {
		csize = parChunkSize(size, w)
	}
	maxChunk := max(parMaxChunk, 2*csize)
	inflight := parInflight(w)

	sp := splitter{src: lx.src, off: lx.offset(), raw: p.raw}
	sp.ra, _ = lx.src.(*readAhead)
	sp.pend = append(hugemem.Make[byte](0, max(csize, lx.end-lx.pos)), lx.buf[lx.pos:lx.end]...)

	var (
		jobs    chan *chunk
		wg      sync.WaitGroup
		abort   atomic.Bool
		queue   []*chunk
		free    []*chunk
		failed  bool
		started bool
	)
	start := func() {
		started = true
		jobs = make(chan *chunk, inflight)
		for i := 0; i < w; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wp := newChunkParser(p.name)
				wp.par.general = p.par.general
				for c := range jobs {
					if !abort.Load() {
						wp.parseChunk(c)
					}
					close(c.done)
				}
			}()
		}
	}
	join := func() bool {
		c := queue[0]
		<-c.done
		if !c.clean || p.ctx.Err() != nil {
			return false // the serial reader goes on, and stops if cancelled
		}
		joined += int(c.nEvents)
		p.join(c)
		queue = queue[1:]
		c.data = c.data[:0]
		free = append(free, c)
		return true
	}
	for !failed {
		var c *chunk
		if n := len(free); n > 0 {
			c, free = free[n-1], free[:n-1]
		} else {
			c = &chunk{}
		}
		if !sp.next(c, csize, maxChunk) {
			free = append(free, c)
			break
		}
		if !started {
			start()
		}
		c.done = make(chan struct{})
		queue = append(queue, c)
		jobs <- c
		for len(queue) >= inflight {
			if !join() {
				failed = true
				break
			}
		}
	}
	for !failed && len(queue) > 0 {
		failed = !join()
	}
	parJoined.Add(int64(joined))
	if started {
		abort.Store(true)
		close(jobs)
		wg.Wait()
	}

	// The serial reader continues at the first byte not joined.
	off := sp.off
	rs := make([]io.Reader, 0, len(queue)+2)
	retry = -1
	if len(queue) > 0 {
		off = queue[0].off
		retry = off + int64(len(queue[0].data))
		for _, c := range queue {
			rs = append(rs, bytes.NewReader(c.data))
		}
	}
	rs = append(rs, bytes.NewReader(sp.pend))
	if sp.err != nil {
		rs = append(rs, errReader{sp.err})
	} else if !sp.eof {
		rs = append(rs, sp.src)
	}
	lx.resume(off, io.MultiReader(rs...))
	p.readAt = 0
	return joined, retry
}

// parJoined counts the events the parallel reads joined (for tests that
// check the parallel read took part).
var parJoined atomic.Int64

// errReader replays the read error the splitter met.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// resume restarts the lexer at stream offset off, reading src.
func (l *lexer) resume(off int64, src io.Reader) {
	l.src = src
	l.pos, l.end, l.base = 0, 0, off
	l.eof, l.rerr = false, nil
}

// splitter cuts the input into chunks at seams.
type splitter struct {
	src  io.Reader
	raw  *rawCounter
	pend []byte // bytes read and not yet in a chunk, from offset off
	off  int64
	ra   *readAhead // the inflater's read-ahead for gzip input, else nil
	eof  bool       // src is spent
	err  error      // src's read error other than io.EOF
}

// rawAt estimates the raw input bytes that held the stream up to off:
// off itself for plain input; for gzip, off scaled by the compressed
// bytes read per byte inflated so far.
func (s *splitter) rawAt(off int64) int64 {
	if s.ra == nil || s.raw == nil {
		return off
	}
	out := s.ra.out.Load()
	if out <= 0 {
		return 0
	}
	return int64(float64(off) * float64(s.raw.n.Load()) / float64(out))
}

// next fills c with the next chunk (about size bytes, up to maxChunk when
// no seam is found sooner); false when the input has no seam left (its
// end, or one event larger than maxChunk): what is left stays in pend.
func (s *splitter) next(c *chunk, size, maxChunk int) bool {
	for {
		for len(s.pend) < size && !s.eof {
			if cap(s.pend) < size {
				s.pend = append(hugemem.Make[byte](0, size), s.pend...)
			}
			n, err := s.src.Read(s.pend[len(s.pend):cap(s.pend)])
			s.pend = s.pend[:len(s.pend)+n]
			if err != nil {
				s.eof = true
				if err != io.EOF {
					s.err = err
				}
			}
		}
		// Less than a chunk left (the input's end): the serial reader
		// takes it, so a small input is read serially.
		cut := -1
		if len(s.pend) >= size {
			cut = seamNear(s.pend, size)
		}
		if cut > 0 {
			// The bytes after the seam start the next chunk.
			nb := append(c.data[:0], s.pend[cut:]...)
			if cap(nb) < size {
				nb = append(hugemem.Make[byte](0, size), s.pend[cut:]...)
			}
			c.data, c.off = s.pend[:cut], s.off
			c.rawAt = s.rawAt(s.off + int64(cut))
			s.off += int64(cut)
			s.pend = nb
			return true
		}
		if s.eof || size >= maxChunk {
			return false
		}
		size = min(2*size, maxChunk)
	}
}

// seamNear returns the position of the first seam at or after size in b,
// else of the last seam before it, or -1.
func seamNear(b []byte, size int) int {
	for from := size; from < len(b); {
		i := bytes.IndexByte(b[from:], ',')
		if i < 0 {
			break
		}
		if k := seamAt(b, from+i); k > 0 {
			return k
		}
		from += i + 1
	}
	return lastSeam(b[:min(size, len(b))])
}

// lastSeam returns the position of the last seam in b (the '{' of an event
// after `}` `,` and optional whitespace, followed by optional whitespace
// and '"'), or -1.
func lastSeam(b []byte) int {
	end := len(b)
	for {
		i := bytes.LastIndexByte(b[:end], ',')
		if i < 0 {
			return -1
		}
		end = i
		if k := seamAt(b, i); k > 0 {
			return k
		}
	}
}

// seamAt returns the seam after the ',' at b[i], or -1 when it is not one.
func seamAt(b []byte, i int) int {
	j := i - 1
	for j >= 0 && isSpace(b[j]) {
		j--
	}
	if j < 0 || b[j] != '}' {
		return -1
	}
	k := i + 1
	for k < len(b) && isSpace(b[k]) {
		k++
	}
	if k >= len(b) || b[k] != '{' {
		return -1
	}
	q := k + 1
	for q < len(b) && isSpace(b[q]) {
		q++
	}
	if q >= len(b) || b[q] != '"' {
		return -1
	}
	return k
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// newChunkParser makes a worker's parser; its tables are reset per chunk.
func newChunkParser(name string) *parser {
	p := newParser(nil, name)
	p.local = true
	return p
}

// parseChunk parses c's events into c's local store.
func (p *parser) parseChunk(c *chunk) {
	t := p.t
	clear(t.intern)
	clear(t.idOf)
	clear(p.diag)
	p.recent = [1 << recentBits]recentString{}
	t.strs = append(c.strs[:0], "")
	p.strCat = append(p.strCat[:0], CatOther)
	t.intern[""] = 0
	p.keys = append(c.keys[:0], "")
	p.strNote = append(c.strNote[:0], 0)
	p.strOff = append(c.strOff[:0], -1)
	t.ids, p.idKeys = c.ids[:0], c.idKeys[:0]
	t.Shapes = c.shapes[:0]
	t.MemArgs = c.memArgs[:0]
	t.Comms = c.comms[:0]
	t.Health = Health{Diagnostics: c.diags[:0]}
	t.RecordShapes, t.WithStack, t.ProfileMemory = false, false, false
	if cap(c.events) == 0 {
		// Sized once per chunk for its smallest events, on huge pages:
		// grown by append, the first chunks' stores took thousands of
		// 4 KiB page faults.
		c.events = hugemem.Make[Event](0, len(c.data)/minEventBytes+64)
	}
	p.cur = c.events[:0]
	p.open = c.open
	for k := range p.open {
		delete(p.open, k)
	}
	p.nEvents, p.idClash = 0, false

	lx := p.lx
	lx.src, lx.buf, lx.pos, lx.end, lx.base = nil, c.data, 0, len(c.data), c.off
	lx.eof, lx.rerr = true, nil
	clean := false
	for {
		if err := p.event(); err != nil {
			break
		}
		ch, err := lx.peek()
		if err != nil || ch != ',' {
			break
		}
		lx.pos++
		ch, err = lx.peek()
		if err == errEOF {
			clean = true
			break
		}
		if ch != '{' {
			break
		}
	}
	fastRead.Add(p.fastN)
	p.fastN = 0
	c.clean = clean && !p.idClash && len(t.ids) < maxLocalIDs
	c.keys, c.strs, c.strNote, c.strOff = p.keys, t.strs, p.strNote, p.strOff
	c.idKeys, c.ids = p.idKeys, t.ids
	c.events, c.shapes, c.open = p.cur, t.Shapes, p.open
	c.memArgs, t.MemArgs = t.MemArgs, nil
	c.comms, t.Comms = t.Comms, nil
	c.diags = t.Health.Diagnostics
	c.nEvents, c.eventsRead, c.dropped = p.nEvents, t.Health.EventsRead, t.Health.Dropped
	c.recShapes, c.withStack, c.profMem = t.RecordShapes, t.WithStack, t.ProfileMemory
	p.cur, p.open, t.Shapes, t.Health.Diagnostics = nil, nil, nil, nil
	lx.buf = nil
}

// join adds a clean chunk's local store to the trace, in file order.
func (p *parser) join(c *chunk) {
	t := p.t
	sm := p.strMap[:0]
	for i, key := range c.keys {
		s, ok := t.intern[key]
		if !ok {
			text := c.strs[i]
			s = Str(len(t.strs))
			t.strs = append(t.strs, text)
			p.strCat = append(p.strCat, catOf(text))
			t.intern[key] = s
			if c.strNote[i]&noteBadUTF8 != 0 {
				p.note(DiagRepair, "bad_utf8", msgBadUTF8, c.strOff[i])
			}
			if c.strNote[i]&noteControl != 0 {
				p.note(DiagRepair, "control_char", msgControl, c.strOff[i])
			}
		}
		sm = append(sm, s)
	}
	p.strMap = sm
	im := p.idMap[:0]
	for i, key := range c.idKeys {
		id, ok := t.idOf[key]
		if !ok {
			id = StrIDBase + ID(len(t.ids))
			t.ids = append(t.ids, c.ids[i])
			t.idOf[key] = id
		}
		im = append(im, id)
	}
	p.idMap = im
	base := p.nEvents
	p.readAt = c.rawAt
	p.keepAll(c.events, base)
	for _, sh := range c.shapes {
		sh.Index += base
		sh.Dims, sh.Types, sh.Concrete, sh.DType = sm[sh.Dims], sm[sh.Types], sm[sh.Concrete], sm[sh.DType]
		t.Shapes = append(t.Shapes, sh)
	}
	for _, m := range c.memArgs {
		m.Index += base
		t.MemArgs = append(t.MemArgs, m)
	}
	for _, ca := range c.comms {
		ca.Index += base
		ca.Collective, ca.Group, ca.GroupDesc = sm[ca.Collective], sm[ca.Group], sm[ca.GroupDesc]
		ca.Ranks, ca.DType = sm[ca.Ranks], sm[ca.DType]
		t.Comms = append(t.Comms, ca)
	}
	for _, list := range c.open {
		for _, b := range list {
			p.relocate(&b.ev, base)
			if p.open == nil {
				p.open = make(map[[2]ID][]beEvent)
			}
			k := [2]ID{b.ev.PID, b.ev.TID}
			p.open[k] = append(p.open[k], b)
		}
	}
	for _, d := range c.diags {
		if i, ok := p.diag[d.Reason]; ok {
			t.Health.Diagnostics[i].Count += d.Count
			continue
		}
		p.diag[d.Reason] = len(t.Health.Diagnostics)
		t.Health.Diagnostics = append(t.Health.Diagnostics, d)
		if d.Kind == DiagRepair {
			t.Health.Repaired = true
		}
	}
	p.nEvents += c.nEvents
	t.Health.EventsRead += c.eventsRead
	t.Health.Dropped += c.dropped
	t.RecordShapes = t.RecordShapes || c.recShapes
	t.WithStack = t.WithStack || c.withStack
	t.ProfileMemory = t.ProfileMemory || c.profMem
	// The chunk keeps its slices for reuse; drop what pins memory.
	clear(c.keys)
	clear(c.strs)
	clear(c.idKeys)
	clear(c.ids)
}

// keepAll keeps a chunk's events, relocated by base. While the sized
// store has room they are copied in blocks and relocated there, where the
// copy left them in cache; the rest go through keep one by one.
func (p *parser) keepAll(evs []Event, base int32) {
	const block = 1024
	for len(evs) > 0 {
		if room := cap(p.flat) - len(p.flat); p.flat != nil && room > 0 {
			n := min(len(evs), room, block)
			at := len(p.flat)
			p.flat = append(p.flat, evs[:n]...)
			for i := at; i < len(p.flat); i++ {
				p.relocate(&p.flat[i], base)
			}
			evs = evs[n:]
			continue
		}
		e := evs[0]
		p.relocate(&e, base)
		p.keep(&e)
		evs = evs[1:]
	}
}

// relocate renumbers a chunk-local event into the trace's tables.
func (p *parser) relocate(e *Event, base int32) {
	sm := p.strMap
	e.Name, e.CatName = sm[e.Name], sm[e.CatName]
	e.Index += base
	if e.PID >= StrIDBase && e.PID < StrIDBase+ID(len(p.idMap)) {
		e.PID = p.idMap[e.PID-StrIDBase]
	}
	if e.TID >= StrIDBase && e.TID < StrIDBase+ID(len(p.idMap)) {
		e.TID = p.idMap[e.TID-StrIDBase]
	}
}

// defaultWorkers is the parallelism for an input of size bytes (0:
// unknown, such as gzip): GOMAXPROCS, or 1 (serial) for small inputs.
func defaultWorkers(size int64, gz bool) int {
	w := runtime.GOMAXPROCS(0)
	if !gz && size > 0 && size < parMinSize {
		return 1
	}
	return w
}
