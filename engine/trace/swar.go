package trace

import (
	"encoding/binary"
	"math/bits"
)

// Scans 8 bytes at a time (SWAR: SIMD within a register). For a word x,
// zeroBytes(x) has the high bit set in the lowest zero byte of x (and
// maybe in higher bytes after it, through the borrow): the lowest set bit
// is exact, which is all the scans below use.
const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

func zeroBytes(x uint64) uint64 { return (x - lo8) &^ x & hi8 }

// quoteOrSlash returns the index of the first '"' or '\\' in b, or -1.
func quoteOrSlash(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := zeroBytes(x^(lo8*'"')) | zeroBytes(x^(lo8*'\\')); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return -1
}

// digits8 returns how many of the 8 bytes of x, from the lowest, are
// ASCII digits before the first that is not (8 when all are).
func digits8(x uint64) int {
	// A byte is a digit when its high nibble is 3 and adding 6 keeps it 3.
	// A carry out of a non-digit byte only reaches bytes after it.
	v := (x & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030
	v |= ((x + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030
	// The high bit of each nonzero byte of v.
	nz := (((v & 0x7F7F7F7F7F7F7F7F) + 0x7F7F7F7F7F7F7F7F) | v) & hi8
	if nz == 0 {
		return 8
	}
	return bits.TrailingZeros64(nz) >> 3
}

// quoteOrSlashWords is quoteOrSlash over the whole 8-byte words of
// b[from:min(from+limit, len(b))], for the short strings most are: the
// index in b of the first '"' or '\\', or -1 when the words hold none
// (the caller's general scan then looks further).
func quoteOrSlashWords(b []byte, from, limit int) int {
	for j := from; j+8 <= len(b) && j < from+limit; j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		if m := zeroBytes(x^(lo8*'"')) | zeroBytes(x^(lo8*'\\')); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	return -1
}
