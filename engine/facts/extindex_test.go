package facts

import (
	"math/rand/v2"
	"testing"
)

// TestIndexExt: the table (dense ids) and the sorted pairs (sparse ids)
// answer as a map filled first-op-wins does.
func TestIndexExt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, spread := range []int64{1, 3, 1 << 40} {
		x := &opIndex{}
		want := map[int64]int{}
		var ids []int64
		var span extSpan
		for pos := range 5000 {
			ext := 100 + r.Int64N(3000)*spread
			if r.IntN(10) == 0 {
				ext = -ext
			}
			x.ops = append(x.ops, pos)
			ids = append(ids, ext)
			span.add(ext)
			if _, ok := want[ext]; !ok {
				want[ext] = pos
			}
		}
		x.newExtIndex(span)
		for pos, ext := range ids {
			x.addExt(ext, pos)
		}
		x.finishExt()
		if dense := x.extTable != nil; dense != (spread < 1<<40) {
			t.Errorf("spread %d: table %v", spread, dense)
		}
		for ext, pos := range want {
			if got, ok := x.byExt(ext); !ok || got != pos {
				t.Fatalf("spread %d: byExt(%d) = %d, %v; want %d", spread, ext, got, ok, pos)
			}
		}
		for _, ext := range []int64{-1 << 62, 0, 99, 1 << 62} {
			if _, ok := want[ext]; ok {
				continue
			}
			if got, ok := x.byExt(ext); ok {
				t.Errorf("spread %d: byExt(%d) = %d for an id no op has", spread, ext, got)
			}
		}
	}
}
