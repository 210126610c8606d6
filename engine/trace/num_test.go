package trace

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestParseNSFastForms: the shortcuts for whole and three-decimal
// microseconds give what the general decimal path gives.
func TestParseNSFastForms(t *testing.T) {
	general := func(b []byte) (int64, bool) {
		m, e, neg, ok := decimal(b)
		if !ok {
			return 0, false
		}
		return scaleInt(m, e, neg, 3)
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"0", "1.000", "0.001", "1606910597590288.000", "9007199254740991.999", "9007199254740992.000", "12.5", "12.34", "-1.500", "1.0001", ".123", "1e3", "1.00a", "-0"}
	for range 2000 {
		inputs = append(inputs, strconv.FormatInt(r.Int64N(1<<53), 10)+"."+strconv.Itoa(1000 + r.IntN(1000))[1:])
		inputs = append(inputs, strconv.FormatInt(r.Int64N(1<<53), 10)+".0"+strconv.Itoa(r.IntN(10))+strconv.Itoa(r.IntN(10)))
	}
	for _, in := range inputs {
		got, gok := parseNS([]byte(in))
		want, wok := general([]byte(in))
		if got != want || gok != wok {
			t.Errorf("parseNS(%q) = %d, %v; the decimal path gives %d, %v", in, got, gok, want, wok)
		}
	}
}

// TestPlainInt: the 8-digits-at-a-time parse gives strconv's value for
// every 1-18 digit integer text and refuses all else, a non-digit at any
// place included.
func TestPlainInt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inputs := []string{"", "-", "0", "-0", "7", "12345678", "123456789", "999999999999999999", "-999999999999999999", "1000000000000000000", "+5", "1.5", "1e3", "00000001"}
	for n := 1; n <= 20; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('0' + r.IntN(10))
			}
			if r.IntN(3) == 0 {
				b[r.IntN(n)] = byte(r.IntN(256))
			}
			if r.IntN(4) == 0 {
				b = append([]byte{'-'}, b...)
			}
			inputs = append(inputs, string(b))
		}
	}
	for _, in := range inputs {
		got, ok := plainInt([]byte(in))
		digits := strings.TrimPrefix(in, "-")
		plain := len(digits) >= 1 && len(digits) <= 18 && strings.Trim(digits, "0123456789") == ""
		want, err := strconv.ParseInt(in, 10, 64)
		if ok != plain || ok && (err != nil || got != want) {
			t.Errorf("plainInt(%q) = %d, %v; want %d, %v", in, got, ok, want, plain)
		}
	}
}

// TestNumberAt: the fast path's number scan ends where a byte-at-a-time
// scan of number bytes ends, for a token JSON's grammar takes (else -1:
// the general read lists the repair), and its value is plainInt's, for
// numbers cut anywhere in and around 8-byte words.
func TestNumberAt(t *testing.T) {
	jsonNum := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	ref := func(b []byte, i int) int {
		j := i
		if b[j] == '-' {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return -1
		}
		for j < len(b) && strings.IndexByte("0123456789-+.eE", b[j]) >= 0 {
			j++
		}
		if j >= len(b) || j-i > maxToken || !jsonNum.Match(b[i:j]) {
			return -1
		}
		return j
	}
	r := rand.New(rand.NewPCG(5, 6))
	const alphabet = "0123456789000000-+.eE,} x"
	for range 20000 {
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(2) == 0 {
			for i := range min(len(b), 1+r.IntN(24)) {
				b[i] = byte('0' + r.IntN(10))
			}
		}
		end, v, plain := numberAt(b, 0)
		if want := ref(b, 0); end != want {
			t.Fatalf("numberAt(%q) ends at %d, want %d", b, end, want)
		}
		if end < 0 {
			continue
		}
		pv, pok := plainInt(b[:end])
		if plain != pok || plain && v != pv {
			t.Fatalf("numberAt(%q) = %d, %v; plainInt gives %d, %v", b, v, plain, pv, pok)
		}
	}
}

// TestNsAt: the one-pass read of ts and dur gives numberEnd's end and
// parseNS's value, for the two forms torch.profiler writes and around
// them: other decimals, exponents, signs, 2^53 microseconds, 18 and 19
// digits, and the slice ending inside or just after the number.
func TestNsAt(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	inputs := []string{"0,", "7}", "1606910596297104,", "1719951234567.123,", "9007199254740991,", "9007199254740992,",
		"9007199254740991.999}", "9007199254740992.000}", "12.5,", "12.34,", "12.3456,", "1.000e3,", "-1.500,", "-0,",
		"1e3,", "123456789012345678,", "1234567890123456789,", "12.", "12.345", "12", "12.3a5,", "1.23.4,", "00012.500 "}
	for range 5000 {
		in := strconv.FormatInt(r.Int64N(1<<(10+r.IntN(50))), 10)
		switch r.IntN(4) {
		case 1:
			in += "." + strconv.Itoa(1000 + r.IntN(1000))[1:]
		case 2:
			in += "." + strconv.Itoa(r.IntN(100000))
		case 3:
			in = "-" + in
		}
		if r.IntN(5) > 0 {
			in += [...]string{",", "}", " ", "]", "e", "x"}[r.IntN(6)]
		}
		inputs = append(inputs, in)
	}
	for _, in := range inputs {
		b := []byte(in)
		end, ns, ok := nsAt(b, 0)
		wend := numberEnd(b, 0)
		var wns int64
		var wok bool
		if wend >= 0 {
			wns, wok = parseNS(b[:wend])
		}
		if end != wend || ok != wok || ns != wns {
			t.Errorf("nsAt(%q) = %d, %d, %v; numberEnd and parseNS give %d, %d, %v", in, end, ns, ok, wend, wns, wok)
		}
	}
}

// TestJSONNumber: jsonNumber is JSON's number grammar (RFC 8259), on
// listed tokens and random ones.
func TestJSONNumber(t *testing.T) {
	re := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	for in, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "30000": true, "30000.000": true, "0.5": true, "-1.5e3": true,
		"3E+4": true, "1e-0": true, "030000": false, "-01": false, "00": false, "30000.": false, "1.e5": false,
		"-.5": false, "-": false, "": false, "1e": false, "1e+": false, "1-2": false, "+1": false, ".5": false,
		"1.5.5": false, "--1": false, "0x10": false,
	} {
		if got := jsonNumber([]byte(in)); got != want {
			t.Errorf("jsonNumber(%q) = %v, want %v", in, got, want)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "0123456789000-+.eE"
	for range 50000 {
		b := make([]byte, r.IntN(9))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if got, want := jsonNumber(b), re.Match(b); got != want {
			t.Fatalf("jsonNumber(%q) = %v, want %v", b, got, want)
		}
	}
}
