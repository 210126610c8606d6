package trace

import (
	"bytes"
	"testing"
)

func TestQuoteOrSlash(t *testing.T) {
	for n := 0; n < 40; n++ {
		for at := -1; at < n; at++ {
			for _, c := range []byte{'"', '\\'} {
				b := bytes.Repeat([]byte{'a' ^ byte(at&7)}, n)
				for i := range b {
					b[i] = byte(0x21 + (i*37)%90)
					if b[i] == '"' || b[i] == '\\' {
						b[i] = 'x'
					}
				}
				if at >= 0 {
					b[at] = c
					if at+1 < n {
						b[at+1] = '"' // a later match must not win
					}
				}
				if got := quoteOrSlash(b); got != at {
					t.Fatalf("quoteOrSlash(%q) = %d, want %d", b, got, at)
				}
			}
		}
	}
}

func TestDigits8(t *testing.T) {
	for x := 0; x < 256; x++ {
		for at := 0; at < 8; at++ {
			b := []byte("12345678")
			b[at] = byte(x)
			want := 8
			for i, c := range b {
				if c < '0' || c > '9' {
					want = i
					break
				}
			}
			var w uint64
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[i])
			}
			if got := digits8(w); got != want {
				t.Fatalf("digits8(%q) = %d, want %d", b, got, want)
			}
		}
	}
}

func TestQuoteOrSlashWords(t *testing.T) {
	b := []byte(`abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ`)
	for from := 0; from < 12; from++ {
		for at := from; at < len(b); at++ {
			for _, c := range []byte{'"', '\\'} {
				x := append([]byte(nil), b...)
				x[at] = c
				for limit := 1; limit < 40; limit += 7 {
					want := -1
					// The words scanned: from+8k while the word fits in x and
					// starts before from+limit.
					for j := from; j+8 <= len(x) && j < from+limit; j += 8 {
						if at < j+8 {
							want = at
							break
						}
					}
					if got := quoteOrSlashWords(x, from, limit); got != want {
						t.Fatalf("quoteOrSlashWords(%q, %d, %d) = %d, want %d", x, from, limit, got, want)
					}
				}
			}
		}
	}
}
