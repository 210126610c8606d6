package facts

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestIntervalAlgebra(t *testing.T) {
	a := unionOf([]interval{{30, 40}, {0, 10}, {5, 20}, {50, 50}})
	if !reflect.DeepEqual(a, ivset{{0, 20}, {30, 40}}) {
		t.Fatalf("union = %v", a)
	}
	b := ivset{{15, 35}}
	if got := intersect(a, b); !reflect.DeepEqual(got, ivset{{15, 20}, {30, 35}}) {
		t.Errorf("intersect = %v", got)
	}
	if got := subtract(a, b); !reflect.DeepEqual(got, ivset{{0, 15}, {35, 40}}) {
		t.Errorf("subtract = %v", got)
	}
	if got := a.clipLen(10, 35); got != 15 {
		t.Errorf("clipLen = %d, want 15", got)
	}
	if got := a.clipLen(20, 30); got != 0 {
		t.Errorf("clipLen in a gap = %d", got)
	}
	parts, rest := partitionSets(ivset{{0, 100}}, []ivset{{{10, 30}}, {{20, 50}}, {{0, 5}, {90, 200}}})
	if !reflect.DeepEqual(parts, []ivset{{{10, 30}}, {{30, 50}}, {{0, 5}, {90, 100}}}) || !reflect.DeepEqual(rest, ivset{{5, 10}, {50, 90}}) {
		t.Errorf("partition = %v rest %v", parts, rest)
	}
}

// TestUnionOrders checks the one-pass unions (start order, end order)
// and the sorting fallback against a covered-points reference, on random
// nested and overlapping intervals, including empty and touching ones.
func TestUnionOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(12)
		iv := make([]interval, n)
		for k := range iv {
			s := rng.Int64N(60)
			iv[k] = interval{s, s + rng.Int64N(15)}
		}
		want := coveredRef(iv)
		orders := map[string]func(a, b interval) int{
			"file":  nil,
			"start": func(a, b interval) int { return cmp.Compare(a.s, b.s) },
			"end":   func(a, b interval) int { return cmp.Compare(a.e, b.e) },
		}
		for name, less := range orders {
			in := slices.Clone(iv)
			if less != nil {
				slices.SortStableFunc(in, less)
			}
			got := unionOf(slices.Clone(in))
			if !reflect.DeepEqual(coveredSet(got), want) || !disjointSorted(got) {
				t.Fatalf("%s order: unionOf(%v) = %v", name, in, got)
			}
		}
	}
}

// coveredRef lists the integer points [p, p+1) covered by iv.
func coveredRef(iv []interval) []int64 {
	var pts []int64
	for p := int64(0); p < 100; p++ {
		for _, x := range iv {
			if x.s <= p && p < x.e {
				pts = append(pts, p)
				break
			}
		}
	}
	return pts
}

func coveredSet(a ivset) []int64 { return coveredRef(a) }

// disjointSorted reports whether a is sorted, non-empty, and has no
// overlapping or touching neighbours.
func disjointSorted(a ivset) bool {
	for k, x := range a {
		if x.e <= x.s || k > 0 && x.s <= a[k-1].e {
			return false
		}
	}
	return true
}

// TestPartitionSweep checks the one-sweep partition against the
// definition (each role gets base ∩ role minus what earlier roles took)
// and overlap against |a ∩ b|, on random sets.
func TestPartitionSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randSet := func() ivset {
		iv := make([]interval, rng.IntN(8))
		for k := range iv {
			s := rng.Int64N(80)
			iv[k] = interval{s, s + rng.Int64N(20)}
		}
		return unionOf(iv)
	}
	for trial := 0; trial < 3000; trial++ {
		base := randSet()
		roles := make([]ivset, rng.IntN(5))
		for k := range roles {
			roles[k] = randSet()
		}
		parts, rest := partitionSets(base, roles)
		left := base
		for k, r := range roles {
			want := intersect(left, r)
			if !reflect.DeepEqual(coveredSet(parts[k]), coveredSet(want)) || !disjointSorted(parts[k]) {
				t.Fatalf("base %v roles %v: part %d = %v, want %v", base, roles, k, parts[k], want)
			}
			left = subtract(left, want)
		}
		if !reflect.DeepEqual(coveredSet(rest), coveredSet(left)) || !disjointSorted(rest) {
			t.Fatalf("base %v roles %v: rest = %v, want %v", base, roles, rest, left)
		}
		a, b := randSet(), randSet()
		if got, want := overlap(a, b), intersect(a, b).total(); got != want {
			t.Fatalf("overlap(%v, %v) = %d, want %d", a, b, got, want)
		}
	}
}

// partitionSets collects partition's pieces into one set per owner.
func partitionSets(base ivset, roles []ivset) (parts []ivset, rest ivset) {
	parts = make([]ivset, len(roles))
	last := interval{-1, -1}
	partition(base, roles, func(owner int, s, e int64) {
		if s < last.e || e <= s {
			panic("pieces out of time order or empty")
		}
		last = interval{s, e}
		set := &rest
		if owner >= 0 {
			set = &parts[owner]
		}
		if k := len(*set) - 1; k >= 0 && (*set)[k].e == s {
			(*set)[k].e = e
			return
		}
		*set = append(*set, interval{s, e})
	})
	return parts, rest
}
