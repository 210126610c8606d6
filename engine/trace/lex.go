package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// errEOF marks input that ended inside a value (a truncated file).
var errEOF = errors.New("unexpected end of input")

// lexer is a pull tokenizer over a sliding window of the input. Slices it
// returns point into the window (or a scratch buffer) and stay valid only
// until the next call.
type lexer struct {
	src     io.Reader
	buf     []byte
	pos     int
	end     int
	base    int64 // stream offset of buf[0]
	eof     bool
	rerr    error // read error other than io.EOF (for example a cut gzip stream)
	scratch []byte
	escaped bool // the last string read had escape sequences

	// repair is called for each recoverable defect with a reason key,
	// message and stream offset.
	repair func(reason, msg string, off int64)
}

const windowSize = 1 << 20

// inflatedSize bounds the uncompressed size of an input of size bytes:
// size itself, or for gzip gzipInflation times it.
func inflatedSize(size int64, gz bool) int64 {
	if gz {
		return size * gzipInflation
	}
	return size
}

// gzipInflation bounds how many times a gzip trace inflates: the shared
// traces inflate 1 to 27 times (ResNet50 num_workers=0 the most), so 32. A trace
// beyond it only gets a window or first chunk that has to grow.
const gzipInflation = 32

// windowFor is the window for an input of size bytes (0: unknown; see
// inflatedSize for gzip): the whole input and a byte when that is less
// than windowSize, so reading a small trace does not clear a megabyte.
func windowFor(size int64, gz bool) int {
	size = inflatedSize(size, gz)
	if size <= 0 || size >= windowSize {
		return windowSize
	}
	return max(int(size)+1, 4<<10)
}

// newLexer makes a lexer reading r; the caller sets the window (see
// windowFor).
func newLexer(r io.Reader) *lexer { return &lexer{src: r} }

// offset is the stream offset of the next unread byte.
func (l *lexer) offset() int64 { return l.base + int64(l.pos) }

// fill reads more input, keeping buf[keep:end]. It returns false when no
// more input can be read. Positions below keep are invalidated; callers
// re-derive slices from the returned shift.
func (l *lexer) fill(keep int) (shift int, ok bool) {
	if l.eof {
		return 0, false
	}
	if keep > 0 {
		copy(l.buf, l.buf[keep:l.end])
		l.end -= keep
		l.pos -= keep
		l.base += int64(keep)
		shift = keep
	}
	if l.end == len(l.buf) {
		nb := make([]byte, 2*len(l.buf))
		copy(nb, l.buf[:l.end])
		l.buf = nb
	}
	for {
		n, err := l.src.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			l.eof = true
			if err != io.EOF {
				l.rerr = err
			}
			return shift, n > 0
		}
		if n > 0 {
			return shift, true
		}
	}
}

// peek skips whitespace and returns the next byte without consuming it.
func (l *lexer) peek() (byte, error) {
	for {
		for l.pos < l.end {
			c := l.buf[l.pos]
			if c > ' ' {
				return c, nil
			}
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			l.pos++
		}
		if _, ok := l.fill(l.pos); !ok {
			return 0, errEOF
		}
	}
}

// open consumes the container opener c ('{' or '[') after optional
// whitespace and reports true; a value of any other kind is skipped and
// reports false.
func (l *lexer) open(c byte) (bool, error) {
	got, err := l.peek()
	if err != nil {
		return false, err
	}
	if got != c {
		return false, l.skipValue()
	}
	l.pos++
	return true, nil
}

// expect consumes c after optional whitespace.
func (l *lexer) expect(c byte) error {
	got, err := l.peek()
	if err != nil {
		return err
	}
	if got != c {
		return l.syntaxErr(fmt.Sprintf("expected %q, found %s", c, quoteByte(got)))
	}
	l.pos++
	return nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// SyntaxError is unrecoverable malformed JSON at Offset (bytes into the
// uncompressed stream).
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Msg) }

func (l *lexer) syntaxErr(msg string) error {
	return &SyntaxError{Offset: l.offset(), Msg: msg}
}

// str reads a JSON string (the opening quote is next) and returns its
// decoded bytes. Invalid escapes are kept literally and reported.
func (l *lexer) str() ([]byte, error) {
	if err := l.expect('"'); err != nil {
		return nil, err
	}
	return l.strBody()
}

// strBody reads a JSON string whose opening quote was just consumed.
func (l *lexer) strBody() ([]byte, error) {
	// Keys and most names are short and plain: one byte loop finds the
	// closing quote and rules out escapes together.
	start := l.pos
	if q := quoteOrSlashWords(l.buf[:l.end], start, shortString); q >= 0 && l.buf[q] == '"' {
		l.pos = q + 1
		l.escaped = false
		return l.buf[start:q], nil
	}
	start, q, err := l.closeQuoteMax(maxString)
	if err != nil {
		return nil, err
	}
	if q < 0 || q-start > maxString {
		return l.cutString(start, q)
	}
	raw := l.buf[start:q]
	l.escaped = bytes.IndexByte(raw, '\\') >= 0
	if !l.escaped {
		return raw, nil
	}
	return l.unescape(raw, l.base+int64(start)), nil
}

// plainKey is member's fast path: `"key":` (after `,` and spaces or
// newlines unless first), short, unescaped and inside the window. It
// consumes through the colon; when ok is false it has consumed nothing.
func (l *lexer) plainKey(first bool) (key []byte, ok bool) {
	buf := l.buf[:l.end]
	i := l.pos
	if !first {
		if i >= len(buf) || buf[i] != ',' {
			return nil, false
		}
		i++
		for i < len(buf) && (buf[i] == ' ' || buf[i] == '\n') {
			i++
		}
	}
	if i >= len(buf) || buf[i] != '"' {
		return nil, false
	}
	start := i + 1
	// The closing quote (or an escape), 8 bytes at a time; a key near the
	// window's end or longer than shortString takes the general path.
	if q := quoteOrSlashWords(buf, start, shortString); q >= 0 && buf[q] == '"' && q+1 < len(buf) && buf[q+1] == ':' {
		l.pos = q + 2
		return buf[start:q], true
	}
	return nil, false
}

// shortString is how far str scans for the closing quote and escapes
// together (8 bytes at a time) before handing a long string to
// bytes.IndexByte.
const shortString = 64

// skipStr skips a JSON string whose opening quote is next. The string is
// not kept: the window moves on past it, so its length does not matter.
func (l *lexer) skipStr() error {
	l.pos++ // opening quote, checked by the caller
	if q := quoteOrSlashWords(l.buf[:l.end], l.pos, shortString); q >= 0 && l.buf[q] == '"' {
		l.pos = q + 1
		return nil
	}
	return l.skipStrRest(0)
}

// skipStrRest skips the rest of a string from l.pos through its closing
// quote, discarding the window as it goes. carry is the number of
// backslashes just before l.pos (only its parity matters).
func (l *lexer) skipStrRest(carry int) error {
	for {
		from := l.pos
		for {
			i := bytes.IndexByte(l.buf[l.pos:l.end], '"')
			if i < 0 {
				break
			}
			q := l.pos + i
			n := 0
			for k := q - 1; k >= from && l.buf[k] == '\\'; k-- {
				n++
			}
			if n == q-from {
				n += carry
			}
			l.pos = q + 1
			if n%2 == 0 {
				return nil
			}
			from, carry = l.pos, 0
		}
		// No closing quote in the window: note the backslashes it ends
		// with, then drop it.
		n := 0
		for k := l.end - 1; k >= from && l.buf[k] == '\\'; k-- {
			n++
		}
		if n == l.end-from {
			carry += n
		} else {
			carry = n
		}
		l.pos = l.end
		if _, ok := l.fill(l.pos); !ok {
			return errEOF
		}
	}
}

// closeQuoteMax finds the quote that ends the string starting at l.pos,
// refilling the window as needed (the string stays contiguous), and returns
// the string's window bounds [start, q), leaving l.pos after the quote. It
// stops keeping the string once more than limit bytes of it are in the
// window (limit < 0: no limit): then q is -1,
// the window holds the string's first bytes from start, and l.pos is not
// past it.
func (l *lexer) closeQuoteMax(limit int) (start, q int, err error) {
	start = l.pos
	if q := quoteOrSlashWords(l.buf[:l.end], start, shortString); q >= 0 && l.buf[q] == '"' {
		l.pos = q + 1
		return start, q, nil
	}
	scanFrom := start
	for {
		if i := bytes.IndexByte(l.buf[scanFrom:l.end], '"'); i >= 0 {
			q = scanFrom + i
			// An odd run of backslashes escapes the quote.
			n := 0
			for k := q - 1; k >= start && l.buf[k] == '\\'; k-- {
				n++
			}
			if n%2 == 1 {
				scanFrom = q + 1
				continue
			}
			l.pos = q + 1
			return start, q, nil
		}
		if limit >= 0 && l.end-start > limit {
			return start, -1, nil
		}
		scanFrom = l.end
		shift, ok := l.fill(start)
		if !ok {
			l.pos = l.end
			return 0, 0, errEOF
		}
		start -= shift
		scanFrom -= shift
	}
}

// cutString returns the first maxString bytes of the string at window
// position start (q: its closing quote, or -1 when beyond the window),
// decoded, cut at a rune boundary and outside an escape, with "…"
// appended, reports the cut, and leaves l.pos after the string.
func (l *lexer) cutString(start, q int) ([]byte, error) {
	off := l.base + int64(start) - 1 // the opening quote
	cut := start + maxString
	// Do not split an escape (\uXXXX is the longest): from the start of
	// the backslash run nearest the cut, step escape by escape.
	for k := cut - 1; k >= cut-6 && k >= start; k-- {
		if l.buf[k] != '\\' {
			continue
		}
		for k > start && l.buf[k-1] == '\\' {
			k--
		}
		p := k
		for p < cut {
			n := 1
			if l.buf[p] == '\\' {
				n = 2
				if l.buf[p+1] == 'u' {
					n = 6
				}
			}
			if p+n > cut {
				break
			}
			p += n
		}
		cut = p
		break
	}
	raw := l.buf[start:cut]
	var out []byte
	if bytes.IndexByte(raw, '\\') >= 0 {
		out = l.unescape(raw, l.base+int64(start))
	} else {
		out = append(l.scratch[:0], raw...)
	}
	if i := lastRuneStart(out); i >= 0 && !utf8.FullRune(out[i:]) {
		out = out[:i]
	}
	out = append(out, "…"...)
	l.scratch = out
	l.escaped = true // the text is not the raw bytes
	l.repair("long_string", fmt.Sprintf("a string of more than %d KiB was cut to its first %d KiB", maxString>>10, maxString>>10), off)
	if q >= 0 {
		return out, nil // l.pos is already past the closing quote
	}
	l.pos = cut
	if err := l.skipStrRest(0); err != nil {
		return nil, err
	}
	return out, nil
}

func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}

func (l *lexer) unescape(raw []byte, off int64) []byte {
	out := l.scratch[:0]
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := decodeU(raw[i+1:])
			if n == 0 {
				l.repair("bad_escape", `invalid \u escape kept as text`, off+int64(i))
				out = append(out, '\\', 'u')
				continue
			}
			i += n
			if utf16.IsSurrogate(r) {
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2, n2 := decodeU(raw[i+3:])
					if n2 > 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 2 + n2
						}
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			// A lone backslash such as a Windows path (C:\Users): keep it.
			l.repair("bad_escape", fmt.Sprintf(`invalid escape "\%c" kept as text`, raw[i]), off+int64(i-1))
			out = append(out, '\\', raw[i])
		}
	}
	l.scratch = out
	return out
}

func decodeU(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

func isNumByte(c byte) bool { return numBytes[c] }

// numBytes marks the bytes of a number token: digits, signs, the point and
// the exponent letters (a table: one load, where the test is six compares).
var numBytes = func() (t [256]bool) {
	for _, c := range []byte("0123456789-+.eE") {
		t[c] = true
	}
	return t
}()

// number reads a number token's text (the next byte starts it).
func (l *lexer) number() ([]byte, error) {
	start := l.pos
	for {
		// Most numbers are runs of digits: 8 at a time, then the rest
		// (sign, fraction, exponent) byte by byte.
		for l.pos+8 <= l.end {
			n := digits8(binary.LittleEndian.Uint64(l.buf[l.pos:]))
			l.pos += n
			if n < 8 {
				break
			}
		}
		for l.pos < l.end && isNumByte(l.buf[l.pos]) {
			l.pos++
		}
		// The cap holds wherever the window ends (in it or past it).
		if l.pos-start > maxToken {
			return nil, &SyntaxError{Offset: l.base + int64(start), Msg: fmt.Sprintf("a number of more than %d bytes", maxToken)}
		}
		if l.pos < l.end {
			tok := l.buf[start:l.pos]
			if !jsonNumber(tok) {
				l.badNumber(tok, l.base+int64(start))
			}
			return tok, nil
		}
		shift, ok := l.fill(start)
		start -= shift
		if !ok {
			// A number at the very end of input is complete only if the
			// input is a bare number, which a trace never is.
			return l.buf[start:l.pos], errEOF
		}
	}
}

// badNumber lists a number token that is not a JSON number (030000,
// 30000., 1.e5, -.5, 1-2) as a repair: it is read as the decimal it
// spells where it spells one (parseNS, parseInt), else as no number. A
// lone '-' before a letter is the sign of -Infinity or -NaN, which the
// callers read as a word and list as non_finite.
func (l *lexer) badNumber(tok []byte, off int64) {
	if len(tok) == 1 && l.pos < l.end {
		if c := l.buf[l.pos]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return
		}
	}
	v := string(tok)
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	l.repair("bad_number", fmt.Sprintf("number %s is not valid JSON (a leading zero, or a sign, point or exponent without digits); read as the decimal it spells, if any", v), off)
}

// word reads a bare word (true, false, null, NaN, Infinity, inf, N/A).
// A slash is part of a word so that N/A is one token; no JSON value is
// followed by one, so other words with a slash are errors either way.
func (l *lexer) word() ([]byte, error) {
	start := l.pos
	for {
		for l.pos < l.end {
			c := l.buf[l.pos]
			if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' {
				l.pos++
				continue
			}
			if l.pos-start > maxToken { // wherever the window ends
				return nil, &SyntaxError{Offset: l.base + int64(start), Msg: fmt.Sprintf("a bare word of more than %d bytes", maxToken)}
			}
			return l.buf[start:l.pos], nil
		}
		if l.pos-start > maxToken {
			return nil, &SyntaxError{Offset: l.base + int64(start), Msg: fmt.Sprintf("a bare word of more than %d bytes", maxToken)}
		}
		shift, ok := l.fill(start)
		start -= shift
		if !ok {
			return l.buf[start:l.pos], errEOF
		}
	}
}

// nonFinite reports whether w is a non-JSON number token that some writers
// emit (NaN, Infinity, inf, with an optional leading minus handled by the
// caller; N/A, which old libkineto wrote for an unknown value,
// pytorch/kineto#131).
func nonFinite(w []byte) bool {
	switch string(w) {
	case "NaN", "nan", "Infinity", "infinity", "inf", "Inf", "N/A":
		return true
	}
	return false
}

// skipValue skips any JSON value. Non-finite number tokens are skipped
// with a repair; trailing commas inside containers are repaired.
func (l *lexer) skipValue() error {
	c, err := l.peek()
	if err != nil {
		return err
	}
	// An empty array or object, common among the args nobody reads.
	if (c == '[' || c == '{') && l.pos+1 < l.end && l.buf[l.pos+1] == c+2 {
		l.pos += 2
		return nil
	}
	switch {
	case c == '"':
		return l.skipStr()
	case c == '{' || c == '[':
		return l.skipContainer()
	case c == '-' || (c >= '0' && c <= '9'):
		if c == '-' && l.negWord() {
			l.pos++
			return l.skipWord()
		}
		_, err := l.number()
		return err
	case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return l.skipWord()
	}
	return l.syntaxErr(fmt.Sprintf("unexpected %s", quoteByte(c)))
}

// negWord reports whether the '-' at l.pos starts -Infinity, -inf or
// -NaN, reading on when the window ends after the '-' (so the answer does
// not depend on where the window ends).
func (l *lexer) negWord() bool {
	if l.pos+1 >= l.end {
		l.fill(l.pos)
	}
	if l.pos+1 >= l.end {
		return false
	}
	c := l.buf[l.pos+1]
	return c == 'I' || c == 'i' || c == 'N'
}

func (l *lexer) skipWord() error {
	off := l.offset()
	w, err := l.word()
	if err != nil {
		return err
	}
	switch string(w) {
	case "true", "false", "null":
		return nil
	}
	if nonFinite(w) {
		l.repair("non_finite", fmt.Sprintf("non-JSON token %q skipped", w), off)
		return nil
	}
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf("unexpected token %q", w)}
}

// skipContainer skips an object or array, tracking nesting and strings.
// It scans the window directly; scalars are not validated except for the
// non-JSON tokens NaN/Infinity/inf (repaired) and trailing commas.
func (l *lexer) skipContainer() error {
	depth := 0
	for {
		if l.pos >= l.end {
			if _, ok := l.fill(l.pos); !ok {
				return errEOF
			}
		}
		c := l.buf[l.pos]
		switch c {
		case '{', '[':
			depth++
			l.pos++
		case '}', ']':
			depth--
			l.pos++
			if depth == 0 {
				return nil
			}
		case '"':
			if err := l.skipStr(); err != nil {
				return err
			}
		case ',':
			l.pos++
			if n, err := l.peek(); err == nil && (n == '}' || n == ']') {
				l.repair("trailing_comma", "trailing comma removed", l.offset()-1)
			}
		case ' ', '\n', '\r', '\t', ':':
			l.pos++
		case 't', 'f', 'n':
			if err := l.skipWord(); err != nil {
				return err
			}
		default:
			if c == '-' || (c >= '0' && c <= '9') {
				if c == '-' && l.negWord() {
					l.pos++
					if err := l.skipWord(); err != nil {
						return err
					}
					continue
				}
				if _, err := l.number(); err != nil {
					return err
				}
				continue
			}
			if err := l.skipScalar(c); err != nil {
				return err
			}
		}
	}
}

func (l *lexer) skipScalar(c byte) error {
	if c == '-' || (c >= '0' && c <= '9') {
		if c == '-' && l.negWord() {
			l.pos++
			return l.skipWord()
		}
		_, err := l.number()
		return err
	}
	if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
		return l.skipWord()
	}
	return l.syntaxErr(fmt.Sprintf("unexpected %s", quoteByte(c)))
}

// maxString caps a string the reader keeps (a name, a category, an arg the
// facts read): a longer one is cut to its first maxString bytes, "…"
// appended, with a long_string repair at its offset; the rest is skipped
// without being held. Strings nobody reads are skipped unheld at any size.
const maxString = 64 << 10

// maxToken caps a number or bare word (true, NaN, ...): no trace writes
// one longer, so a longer one is a syntax error, not a window its size.
const maxToken = 4 << 10
