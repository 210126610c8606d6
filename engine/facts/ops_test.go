package facts

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortOpKeys checks the radix sort against slices.SortFunc on random
// keys with many equal starts and durations, small and large spans (span
// 1: a whole thread at one timestamp, as a damaged trace may have).
func TestSortOpKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tmp []opKey
	for _, n := range []int{0, 1, 255, 256, 1000, 5000, 20000} {
		for _, span := range []int64{1, 50, 1 << 20, 1 << 40} {
			keys := make([]opKey, n)
			for i := range keys {
				keys[i] = opKey{ts: 1e15 + rng.Int64N(span), dur: rng.Int64N(4), index: int32(rng.IntN(n + 1)), i: int32(i)}
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, opKeyCmp)
			tmp = sortOpKeys(keys, tmp)
			for i := range keys {
				if opKeyCmp(keys[i], want[i]) != 0 {
					t.Fatalf("n=%d span=%d: key %d = %+v, want %+v", n, span, i, keys[i], want[i])
				}
			}
		}
	}
}

// BenchmarkSortOpKeysOneTimestamp sorts a thread whose 80,000 operators
// all start at one timestamp (a damaged or synthetic trace): the runs of
// equal starts must not fall back to a quadratic insertion sort (this took
// 26 s before they were sorted with slices.SortFunc).
func BenchmarkSortOpKeysOneTimestamp(b *testing.B) {
	keys := make([]opKey, 80_000)
	for b.Loop() {
		for i := range keys {
			keys[i] = opKey{ts: 1000, dur: int64(i + 1), index: int32(i), i: int32(i)}
		}
		sortOpKeys(keys, nil)
	}
}
