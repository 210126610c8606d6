package trace

import "math/bits"

var pow10 = [...]uint64{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimal parses JSON number text into sign, up to 19 significant digits
// and a base-10 exponent: value = mant * 10^exp. ok is false for anything
// that is not a finite JSON number.
func decimal(b []byte) (mant uint64, exp int, neg bool, ok bool) {
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	digits := 0
	sawDigit := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		sawDigit = true
		if digits < 19 {
			if mant != 0 || b[i] != '0' {
				digits++
			}
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			exp++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			sawDigit = true
			if digits < 19 {
				if mant != 0 || b[i] != '0' {
					digits++
				}
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			}
		}
	}
	if !sawDigit {
		return 0, 0, false, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		e := 0
		start := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == start {
			return 0, 0, false, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, 0, false, false
	}
	return mant, exp, neg, true
}

// jsonNumber reports whether b is a number as JSON (RFC 8259) writes it:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. The reader still reads
// the other number tokens it meets (030000, 30000., 1.e5, -.5) as the
// decimal they spell, where they spell one, but lists each as a
// bad_number repair (lexer.number); the fast path leaves them to it.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		s := i + 1
		for i = s; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
		if i == s {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
		if i == s {
			return false
		}
	}
	return i == len(b)
}

// scaleInt returns mant * 10^(exp+shift) rounded half away from zero,
// with ok false on int64 overflow.
func scaleInt(mant uint64, exp int, neg bool, shift int) (int64, bool) {
	e := exp + shift
	v := mant
	switch {
	case mant == 0:
		return 0, true
	case e > 0:
		if e > 19 {
			return 0, false
		}
		hi, lo := bits.Mul64(v, pow10[e])
		if hi != 0 {
			return 0, false
		}
		v = lo
	case e < 0:
		if -e > 19 {
			v = 0
			break
		}
		d := pow10[-e]
		q, r := v/d, v%d
		if r*2 >= d {
			q++
		}
		v = q
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// plainInt parses the common case of integer text: an optional minus and
// 1 to 18 digits, nothing else (no overflow possible). ok is false for any
// other text, which the general path then handles.
func plainInt(b []byte) (int64, bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i = 1
	}
	if len(b) == i || len(b)-i > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b[i:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if i == 1 {
		v = -v
	}
	return v, true
}

// parseNS converts a microsecond number text to exact int64 nanoseconds.
func parseNS(b []byte) (int64, bool) {
	if v, ok := plainInt(b); ok && v < 1<<53 && v > -1<<53 {
		return v * 1000, true // whole microseconds (the 2020-2021 format)
	}
	// Microseconds with three decimals, whole nanoseconds (Kineto since
	// 2022): the integer part and the fraction's three digits.
	if n := len(b); n >= 5 && b[n-4] == '.' && b[0] != '-' {
		if v, ok := plainInt(b[:n-4]); ok && v < 1<<53 {
			f0, f1, f2 := b[n-3]-'0', b[n-2]-'0', b[n-1]-'0'
			if f0 <= 9 && f1 <= 9 && f2 <= 9 {
				return v*1000 + int64(f0)*100 + int64(f1)*10 + int64(f2), true
			}
		}
	}
	m, e, neg, ok := decimal(b)
	if !ok {
		return 0, false
	}
	return scaleInt(m, e, neg, 3)
}

// parseInt converts integer text (or an integral float such as 7.0) to
// int64; ok is false for fractions, non-numbers and overflow.
func parseInt(b []byte) (int64, bool) {
	if v, ok := plainInt(b); ok {
		return v, true
	}
	m, e, neg, ok := decimal(b)
	if !ok {
		return 0, false
	}
	if e < 0 {
		for ; e < 0; e++ {
			if m%10 != 0 {
				return 0, false
			}
			m /= 10
		}
	}
	return scaleInt(m, e, neg, 0)
}

func itoa(v int64) string {
	var b [24]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
