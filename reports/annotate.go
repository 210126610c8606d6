package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/rules"
)

// An annotated trace is the input trace, byte for byte, with the findings
// added to its traceEvents array, so that a trace viewer (ui.perfetto.dev,
// chrome://tracing) opens on the evidence:
//
//   - a process named "stepdoctor" (a pid no event of the trace uses) with
//     one thread per finding, named "#rank severity rule: title" and sorted
//     by rank; on it one complete event ("ph":"X") spans the finding's
//     evidence window, from the start of its first example event to the
//     end of its last (a finding without example events gets its thread
//     and nothing on it);
//   - on the track (pid, tid) of each example event an instant event
//     ("ph":"i", "s":"t") at the example's start;
//   - a flow ("ph":"s" on the finding's thread, "ph":"f" with "bp":"e" on
//     the example's track) from the finding's slice to the example event.
//
// Every added event has category AnnotateCategory. The format of the
// metadata, instant and flow events is the Trace Event Format's (Google,
// "Trace Event Format", the phases M, X, i, s and f). The trace's own
// reader reads the annotated trace to the same facts: the added events
// are neither GPU activity nor CPU operators, the slices lie inside the
// span of the trace's own events, and metadata and flows are not stored.

// AnnotateCategory is the "cat" of every event an annotated trace adds.
const AnnotateCategory = "stepdoctor"

// annotateFlowName names the flows from a finding to its examples.
const annotateFlowName = "stepdoctor finding"

// maxAnnotateString bounds each string an annotated trace adds (a message
// quoting long kernel names); longer ones are cut at a rune with "…".
const maxAnnotateString = 4 << 10

// AnnotateFile writes the trace at in, with findings added as described
// above, atomically to out (WriteFile). A gzip input (by its magic bytes)
// is read through gzip; out is gzip when its name ends in ".gz".
func AnnotateFile(out, in string, findings []rules.Finding) error {
	return annotateFile(out, in, findings, 0)
}

// annotateFile is AnnotateFile for a trace whose analysis read analyzed
// uncompressed bytes (0: not known): a file that now ends before that is
// one that changed since it was analyzed, and the copy fails saying so,
// whatever the splice met (a cut file reads as a trace that ends too
// soon). A longer file is not: the analysis may have stopped at damage.
func annotateFile(out, in string, findings []rules.Finding, analyzed int64) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("read gzip header of %s: %w", in, err)
		}
		zr.Multistream(true)
		src = zr
	}
	cr := &countReader{r: src}
	annotate := func(w io.Writer) error {
		err := AnnotateTrace(w, cr, findings)
		if cr.eof && cr.n < analyzed {
			return fmt.Errorf("annotate trace %s: byte %d: the file changed since it was analyzed (it ends there; the analysis read %d bytes): analyze it again", in, cr.n, analyzed)
		}
		if err != nil {
			return fmt.Errorf("annotate trace %s: %w", in, err)
		}
		return nil
	}
	return WriteFile(out, func(w io.Writer) error {
		if !strings.HasSuffix(strings.ToLower(out), ".gz") {
			return annotate(w)
		}
		zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
		if err != nil {
			return err
		}
		if err := annotate(zw); err != nil {
			return err
		}
		return zw.Close()
	})
}

// countReader counts the bytes read from r and whether r ended.
type countReader struct {
	r   io.Reader
	n   int64
	eof bool
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.eof = c.eof || err == io.EOF
	return n, err
}

// AnnotateResult annotates the one trace of r (an error for none or
// several, or for a trace read from stdin or a facts file: there is no
// trace file to copy).
func AnnotateResult(out string, r *engine.Result) error {
	if len(r.Traces) != 1 {
		return fmt.Errorf("annotate trace: --annotate writes one trace and %d were read; run analyze once per trace", len(r.Traces))
	}
	tr := r.Traces[0]
	switch {
	case tr.Input.Path == "-":
		return errors.New("annotate trace: a trace read from stdin cannot be copied; give its file")
	case engine.IsFactsFile(tr.Input.Path):
		return fmt.Errorf("annotate trace: %s is a facts file, not a trace; give the trace it came from", tr.Input.Path)
	}
	return annotateFile(out, tr.Input.Path, tr.Findings, tr.Input.Bytes)
}

// AnnotateTrace copies the uncompressed Chrome-trace JSON from src to w,
// adding the findings' events at the end of its traceEvents array (or of
// the top-level array of a bare-array trace). It reads src once, holding
// a fixed-size buffer, the set of pids (bounded) and the spelling of the
// example events' ids: the input is never held whole. Offsets in errors
// are in uncompressed bytes. It fails when the input has no traceEvents array or ends before
// the array closes (a cut trace), naming the byte offset.
func AnnotateTrace(w io.Writer, src io.Reader, findings []rules.Finding) error {
	sc := newSpliceScan(findings)
	buf := make([]byte, 256<<10)
	var off int64
	for {
		n, rerr := src.Read(buf)
		chunk := buf[:n]
		if at := sc.scan(chunk); at >= 0 {
			if _, err := w.Write(chunk[:at]); err != nil {
				return err
			}
			ins, err := sc.insertion(findings)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(w, ins); err != nil {
				return err
			}
			if _, err := w.Write(chunk[at:]); err != nil {
				return err
			}
			if rerr == io.EOF {
				return nil
			}
			if rerr != nil {
				return fmt.Errorf("read trace: %w", rerr)
			}
			if _, err := io.Copy(w, src); err != nil {
				return fmt.Errorf("copy trace after byte %d: %w", off+int64(n), err)
			}
			return nil
		}
		if sc.err != nil {
			return fmt.Errorf("byte %d: %w", off+sc.errAt, sc.err)
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		off += int64(n)
		if rerr == io.EOF {
			if sc.arrLevel > 0 {
				return fmt.Errorf("byte %d: the trace ends before its traceEvents array closes (a cut trace); annotate a complete trace", off)
			}
			return fmt.Errorf("byte %d: no traceEvents array (not a Chrome trace)", off)
		}
		if rerr != nil {
			return fmt.Errorf("byte %d: read trace: %w", off, rerr)
		}
	}
}

// spliceScan follows the JSON structure of a trace byte by byte, across
// chunk boundaries, to find where its events array closes and which pids,
// tids and flow ids its events use. It checks only the nesting of
// brackets and strings: what the reader repairs (NaN tokens, trailing
// commas, bad escapes) passes through untouched.
type spliceScan struct {
	stack    []byte // open '{' and '['
	inStr    bool
	esc      bool
	keyNext  bool // in an object: the next string is a key
	arrLevel int  // len(stack) once the events array is open; 0 before
	lastSig  byte // last byte outside strings at the events array's level
	errAt    int64
	err      error

	// capture of a key (top-level or event-level) or of a pid/tid/id value
	capturing bool
	capIsKey  bool
	capBuf    []byte
	capLong   bool
	topKey    string // the top-level key whose value comes next
	field     byte   // 'P' pid, 'T' tid, 'I' id, 'S' ts, 'H' ph: the event key whose value comes next
	numCap    bool   // capturing a bare number value

	maxPID, maxTID, maxID int64
	pids                  map[int64]bool // the integer pids, up to maxPIDSet of them
	pidsFull              bool           // more pids than that: the set is incomplete

	// The event being read, and how the complete events that start where
	// an example starts spell their pid and tid: Kineto wrote some tids
	// as strings ("4093687616") and others as numbers, and Perfetto puts
	// the two on different tracks.
	ev    eventIDs
	want  map[int64]bool // example starts, ns
	forms map[trackKey]idForms
}

// eventIDs is what the scan keeps of one event: its pid and tid as
// written, its ts in ns and its phase.
type eventIDs struct {
	pid, tid idText
	ts       int64
	hasTS    bool
	ph       byte
}

// idText is a pid or tid value as written: its text (a string's body) and
// whether it was a JSON string.
type idText struct {
	buf    [24]byte
	n      int
	quoted bool
	ok     bool
}

// canon is the reader's spelling (trace.IDString) of an id: an integer
// literal, quoted or not, as its decimal; other text as it is.
func (t *idText) canon() string {
	b := t.buf[:t.n]
	if v, ok := parseID(b); ok {
		return strconv.FormatInt(v, 10)
	}
	return string(b)
}

type trackKey struct {
	ts       int64
	pid, tid string
}

type idForms struct{ pidQuoted, tidQuoted bool }

// maxPIDSet bounds the set of pids kept (a trace has a few processes and
// devices; a hostile one may list millions).
const maxPIDSet = 1 << 16

func newSpliceScan(findings []rules.Finding) *spliceScan {
	sc := &spliceScan{maxPID: -1, maxTID: -1, maxID: -1, pids: map[int64]bool{}, want: map[int64]bool{}, forms: map[trackKey]idForms{}}
	for _, f := range findings {
		for _, ex := range f.Examples {
			sc.want[exampleNS(ex.TSNS, ex.TSUS)] = true
		}
	}
	return sc
}

// maxSpliceDepth bounds the nesting the scan follows (a hostile input of
// nested brackets).
const maxSpliceDepth = 1 << 12

// scan reads chunk and returns the index of the ']' that closes the events
// array, or -1 (read on; or sc.err is set).
func (sc *spliceScan) scan(chunk []byte) int {
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if sc.inStr && !sc.capturing && !sc.esc {
			// Skip the string's body to its closing quote or next escape.
			rest := chunk[i:]
			q := bytes.IndexByte(rest, '"')
			if q < 0 {
				q = len(rest)
			}
			if bs := bytes.IndexByte(rest[:q], '\\'); bs >= 0 {
				q = bs
			}
			i += q
			if i == len(chunk) {
				break
			}
			c = chunk[i]
		}
		if sc.inStr {
			switch {
			case sc.esc:
				sc.esc = false
				sc.capByte(c)
			case c == '\\':
				sc.esc = true
				sc.capLong = true // an escaped key or pid is none of ours
			case c == '"':
				sc.inStr = false
				sc.endString()
			default:
				sc.capByte(c)
			}
			continue
		}
		if sc.numCap {
			if isNumByte(c) {
				sc.capByte(c)
				continue
			}
			sc.numCap = false
			sc.endValue(false)
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			sc.inStr = true
			sc.startString()
		case '{', '[':
			if len(sc.stack) >= maxSpliceDepth {
				sc.err, sc.errAt = fmt.Errorf("nesting deeper than %d", maxSpliceDepth), int64(i)
				return -1
			}
			opensEvents := sc.arrLevel == 0 && c == '[' && (len(sc.stack) == 0 || (len(sc.stack) == 1 && sc.stack[0] == '{' && sc.topKey == "traceEvents"))
			sc.field, sc.topKey = 0, ""
			sc.stack = append(sc.stack, c)
			sc.keyNext = c == '{'
			if opensEvents {
				sc.arrLevel = len(sc.stack)
			}
			if sc.arrLevel > 0 && len(sc.stack) == sc.arrLevel+1 {
				sc.ev = eventIDs{}
			}
		case '}', ']':
			if len(sc.stack) == 0 {
				sc.err, sc.errAt = fmt.Errorf("unexpected %q", c), int64(i)
				return -1
			}
			if c == ']' && len(sc.stack) == sc.arrLevel {
				return i
			}
			if c == '}' && sc.arrLevel > 0 && len(sc.stack) == sc.arrLevel+1 {
				sc.endEvent()
			}
			sc.stack = sc.stack[:len(sc.stack)-1]
			sc.keyNext = false
			sc.field, sc.topKey = 0, ""
		case ',':
			sc.keyNext = len(sc.stack) > 0 && sc.stack[len(sc.stack)-1] == '{'
			sc.field, sc.topKey = 0, ""
		case ':':
			sc.keyNext = false
		default:
			if sc.field != 0 && len(sc.stack) == sc.arrLevel+1 && isNumByte(c) {
				sc.capturing, sc.capIsKey, sc.capLong = true, false, false
				sc.capBuf = append(sc.capBuf[:0], c)
				sc.numCap = true
				continue
			}
		}
		if sc.arrLevel > 0 && len(sc.stack) == sc.arrLevel {
			sc.lastSig = c
		}
	}
	return -1
}

func isNumByte(c byte) bool { return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') }

// startString begins a string: a key at the top level or of an event, or
// the value of an event's pid/tid/id, is captured.
func (sc *spliceScan) startString() {
	d := len(sc.stack)
	event := sc.arrLevel > 0 && d == sc.arrLevel+1 && sc.stack[d-1] == '{'
	top := d == 1 && sc.stack[0] == '{' && sc.arrLevel == 0
	sc.capturing = false
	switch {
	case sc.keyNext && (event || top):
		sc.capturing, sc.capIsKey = true, true
	case !sc.keyNext && event && sc.field != 0:
		sc.capturing, sc.capIsKey = true, false
	}
	sc.capBuf, sc.capLong = sc.capBuf[:0], false
}

func (sc *spliceScan) capByte(c byte) {
	if !sc.capturing || sc.capLong {
		return
	}
	if len(sc.capBuf) >= 24 {
		sc.capLong = true
		return
	}
	sc.capBuf = append(sc.capBuf, c)
}

func (sc *spliceScan) endString() {
	if sc.arrLevel > 0 && len(sc.stack) == sc.arrLevel {
		sc.lastSig = '"'
	}
	if !sc.capturing {
		sc.field = 0
		return
	}
	if !sc.capIsKey {
		sc.endValue(true)
		return
	}
	sc.capturing = false
	if sc.capLong {
		sc.capBuf = sc.capBuf[:0]
	}
	if len(sc.stack) == 1 {
		sc.topKey = string(sc.capBuf)
		return
	}
	switch string(sc.capBuf) {
	case "pid":
		sc.field = 'P'
	case "tid":
		sc.field = 'T'
	case "id":
		sc.field = 'I'
	case "ts":
		sc.field = 'S'
	case "ph":
		sc.field = 'H'
	default:
		sc.field = 0
	}
}

// endValue records a captured value of an event: its pid, tid, ts, ph,
// or an integer flow id.
func (sc *spliceScan) endValue(quoted bool) {
	sc.capturing = false
	f := sc.field
	sc.field = 0
	if sc.capLong {
		return
	}
	switch f {
	case 'P', 'T':
		t := &sc.ev.pid
		if f == 'T' {
			t = &sc.ev.tid
		}
		t.n = copy(t.buf[:], sc.capBuf)
		t.quoted, t.ok = quoted, t.n == len(sc.capBuf)
	case 'S':
		sc.ev.ts, sc.ev.hasTS = parseUSAsNS(sc.capBuf)
		return
	case 'H':
		if len(sc.capBuf) > 0 && quoted {
			sc.ev.ph = sc.capBuf[0]
		}
		return
	}
	v, ok := parseID(sc.capBuf)
	if !ok {
		return
	}
	switch f {
	case 'P':
		sc.maxPID = max(sc.maxPID, v)
		switch {
		case sc.pids[v]:
		case len(sc.pids) < maxPIDSet:
			sc.pids[v] = true
		default:
			sc.pidsFull = true
		}
	case 'T':
		sc.maxTID = max(sc.maxTID, v)
	case 'I':
		sc.maxID = max(sc.maxID, v)
	}
}

// endEvent notes how a complete event that starts where an example starts
// spells its pid and tid.
func (sc *spliceScan) endEvent() {
	e := &sc.ev
	if !e.hasTS || !sc.want[e.ts] || (e.ph != 'X' && e.ph != 'B') || !e.pid.ok || !e.tid.ok {
		return
	}
	k := trackKey{e.ts, e.pid.canon(), e.tid.canon()}
	if _, seen := sc.forms[k]; !seen && len(sc.forms) < 1<<16 {
		sc.forms[k] = idForms{e.pid.quoted, e.tid.quoted}
	}
}

// parseUSAsNS reads a timestamp in microseconds ("12.345", "-1", digits
// past the nanosecond dropped) as nanoseconds; no exponents.
func parseUSAsNS(b []byte) (int64, bool) {
	whole, frac, _ := bytes.Cut(b, []byte("."))
	neg := len(whole) > 0 && whole[0] == '-'
	if neg {
		whole = whole[1:]
	}
	if len(whole) == 0 || len(whole) > 16 {
		return 0, false
	}
	var v int64
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if v > math.MaxInt64/1000-1 {
		return 0, false
	}
	for k := 0; k < 3; k++ {
		d := int64(0)
		if k < len(frac) {
			if frac[k] < '0' || frac[k] > '9' {
				return 0, false
			}
			d = int64(frac[k] - '0')
		}
		v = v*10 + d
	}
	for _, c := range frac[min(3, len(frac)):] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseID reads a decimal integer literal (an optional '-', digits, no
// more than 18 of them) without allocating.
func parseID(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// annotateIDLimit keeps the added pid and tids in 31 bits: viewers store
// them as 32-bit integers.
const annotateIDLimit = math.MaxInt32

// insertion renders the events added before the closing ']'.
func (sc *spliceScan) insertion(findings []rules.Finding) (string, error) {
	pid := sc.maxPID + 1
	if pid < 1 {
		pid = 1
	}
	if pid > annotateIDLimit {
		// The trace uses a pid at the limit: take the smallest free one.
		if sc.pidsFull {
			return "", fmt.Errorf("choose a pid for the %s process: the trace uses more than %d pids, up to %d", AnnotateCategory, maxPIDSet, sc.maxPID)
		}
		for pid = 1; sc.pids[pid]; pid++ {
		}
	}
	tid0 := max(sc.maxTID+1, 1)
	if tid0+int64(len(findings)) > annotateIDLimit {
		tid0 = 1 // pids tell the threads apart; Chrome keys threads by (pid, tid)
	}
	flow := max(sc.maxID+1, 1)
	var b strings.Builder
	var earliest int64
	first := sc.lastSig == '[' || sc.lastSig == ','
	emit := func(ev annotateEvent) {
		raw, _ := json.Marshal(ev) // strings, numbers and raw numbers only
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString("\n")
		b.Write(raw)
	}
	// Metadata events carry the earliest example's start as their ts, as
	// Kineto gives its own the trace's start.
	var metaTS json.RawMessage
	for _, f := range findings {
		for _, ex := range f.Examples {
			if s := exampleNS(ex.TSNS, ex.TSUS); metaTS == nil || s < earliest {
				metaTS, earliest = usRaw(s), s
			}
		}
	}
	pidRaw := json.RawMessage(strconv.FormatInt(pid, 10))
	emit(annotateEvent{Name: "process_name", Ph: "M", TS: metaTS, PID: pidRaw, Args: &annotateArgs{Name: AnnotateCategory}})
	emit(annotateEvent{Name: "process_sort_index", Ph: "M", TS: metaTS, PID: pidRaw, Args: &annotateArgs{SortIndex: intp(-1)}})
	for k := range findings {
		f := &findings[k]
		rank := k + 1
		tidRaw := json.RawMessage(strconv.FormatInt(tid0+int64(k), 10))
		label := fmt.Sprintf("#%d %s", rank, cutString(f.Title))
		thread := fmt.Sprintf("#%d %s %s: %s", rank, f.Severity, f.Rule, cutString(f.Title))
		if len(f.Examples) == 0 {
			thread += " (no example events)"
		}
		emit(annotateEvent{Name: "thread_name", Ph: "M", TS: metaTS, PID: pidRaw, TID: tidRaw, Args: &annotateArgs{Name: thread}})
		emit(annotateEvent{Name: "thread_sort_index", Ph: "M", TS: metaTS, PID: pidRaw, TID: tidRaw, Args: &annotateArgs{SortIndex: intp(rank)}})
		if len(f.Examples) == 0 {
			continue
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, ex := range f.Examples {
			s := exampleNS(ex.TSNS, ex.TSUS)
			lo, hi = min(lo, s), max(hi, s+durNS(ex.DurUS))
		}
		emit(annotateEvent{Name: label, Cat: AnnotateCategory, Ph: "X", TS: usRaw(lo), Dur: usRaw(hi - lo), PID: pidRaw, TID: tidRaw,
			Args: &annotateArgs{Rule: f.Rule, Severity: string(f.Severity), Impact: fmtRatio(f.Impact), Message: cutString(f.Message), Examples: len(f.Examples)}})
		for _, ex := range f.Examples {
			s, d := exampleNS(ex.TSNS, ex.TSUS), durNS(ex.DurUS)
			at := s + min(1, d/2) // inside the example, past a sibling ending at its start
			form := sc.forms[trackKey{s, ex.PID, ex.TID}]
			epid, etid := idRaw(ex.PID, form.pidQuoted), idRaw(ex.TID, form.tidQuoted)
			emit(annotateEvent{Name: label, Cat: AnnotateCategory, Ph: "i", S: "t", TS: usRaw(s), PID: epid, TID: etid,
				Args: &annotateArgs{Rule: f.Rule, Severity: string(f.Severity), Message: cutString(f.Message), Event: cutString(ex.Name)}})
			emit(annotateEvent{Name: annotateFlowName, Cat: AnnotateCategory, Ph: "s", ID: flow, TS: usRaw(at), PID: pidRaw, TID: tidRaw})
			emit(annotateEvent{Name: annotateFlowName, Cat: AnnotateCategory, Ph: "f", BP: "e", ID: flow, TS: usRaw(at), PID: epid, TID: etid})
			flow++
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

// annotateEvent is one added event; field order is the output's.
type annotateEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat,omitempty"`
	Ph   string          `json:"ph"`
	S    string          `json:"s,omitempty"`
	BP   string          `json:"bp,omitempty"`
	ID   int64           `json:"id,omitempty"`
	TS   json.RawMessage `json:"ts,omitempty"`
	Dur  json.RawMessage `json:"dur,omitempty"`
	PID  json.RawMessage `json:"pid"`
	TID  json.RawMessage `json:"tid,omitempty"`
	Args *annotateArgs   `json:"args,omitempty"`
}

type annotateArgs struct {
	Name      string `json:"name,omitempty"`
	SortIndex *int   `json:"sort_index,omitempty"`
	Rule      string `json:"rule,omitempty"`
	Severity  string `json:"severity,omitempty"`
	Impact    string `json:"impact,omitempty"`
	Message   string `json:"message,omitempty"`
	Event     string `json:"event,omitempty"`
	Examples  int    `json:"examples,omitempty"`
}

func intp(v int) *int { return &v }

// exampleNS is an example's start in nanoseconds: the exact TSNS, else
// (an example read back from a facts file) TSUS rounded.
func exampleNS(tsNS int64, tsUS float64) int64 {
	if tsNS != 0 || tsUS == 0 {
		return tsNS
	}
	return int64(math.Round(tsUS * 1e3))
}

// durNS is a duration in microseconds as whole nanoseconds (exact for the
// reader's durations, which are whole nanoseconds under 7 days).
func durNS(us float64) int64 {
	if !(us > 0) || us > math.MaxInt64/1e3 {
		return 0
	}
	return int64(math.Round(us * 1e3))
}

// usRaw writes nanoseconds as microseconds with three decimals, the way
// Kineto does, so the reader gets the exact nanoseconds back.
func usRaw(ns int64) json.RawMessage {
	sign := ""
	u := uint64(ns)
	if ns < 0 {
		sign, u = "-", uint64(-ns)
	}
	return json.RawMessage(fmt.Sprintf("%s%d.%03d", sign, u/1000, u%1000))
}

// idRaw writes a pid or tid as the example event had it: an integer as a
// number unless quoted, other text ("Spans", "stream 7") as a JSON string.
func idRaw(s string, quoted bool) json.RawMessage {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && !quoted {
		return json.RawMessage(strconv.FormatInt(v, 10))
	}
	raw, _ := json.Marshal(s)
	return raw
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// cutString bounds an added string at maxAnnotateString bytes, cut at a
// rune boundary with "…".
func cutString(s string) string {
	if len(s) <= maxAnnotateString {
		return s
	}
	cut := maxAnnotateString - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
