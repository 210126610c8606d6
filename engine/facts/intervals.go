package facts

import (
	"cmp"
	"slices"
)

// ivset is a sorted set of disjoint, non-empty half-open intervals.
type ivset []interval

// unionOf returns the union of iv as an ivset, built in iv's own memory:
// iv is reordered and overwritten, so callers pass a list they built for
// it.
//
// Event lists usually come in file order, which for one thread is start
// order (Kineto 2.x) or end order (the 2020-2021 exporter, which wrote
// each operator when it returned). Both merge in one pass, forward or
// backward; only other orders are sorted.
func unionOf(iv []interval) ivset {
	byStart, byEnd := true, true
	n := 0
	for _, x := range iv {
		if x.e <= x.s {
			continue
		}
		if n > 0 {
			byStart = byStart && iv[n-1].s <= x.s
			byEnd = byEnd && iv[n-1].e <= x.e
		}
		iv[n] = x
		n++
	}
	if n == 0 {
		return nil
	}
	iv = iv[:n]
	switch {
	case byStart:
	case byEnd:
		// Backward, in descending end order: an interval either reaches
		// the current block's start or begins a new block to its left.
		// Blocks are written from the end down, never past the reading.
		w := n
		for i := n - 1; i >= 0; i-- {
			x := iv[i]
			if w < n && x.e >= iv[w].s {
				iv[w].s = min(iv[w].s, x.s)
				continue
			}
			w--
			iv[w] = x
		}
		return iv[w:]
	default:
		slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.s, b.s) })
	}
	out := iv[:0] // in place: out never passes the interval being read
	for _, x := range iv {
		out = mergeNext(out, x)
	}
	return out
}

// mergeNext adds x to a union built in start order.
func mergeNext(out ivset, x interval) ivset {
	if k := len(out) - 1; k >= 0 && x.s <= out[k].e {
		out[k].e = max(out[k].e, x.e)
		return out
	}
	return append(out, x)
}

func (a ivset) total() int64 {
	var n int64
	for _, x := range a {
		n += x.e - x.s
	}
	return n
}

// clipLen returns |a ∩ [lo, hi)|.
func (a ivset) clipLen(lo, hi int64) int64 {
	k, _ := slices.BinarySearchFunc(a, lo, func(x interval, t int64) int { return cmp.Compare(x.e, t+1) })
	var n int64
	for ; k < len(a) && a[k].s < hi; k++ {
		s, e := max(a[k].s, lo), min(a[k].e, hi)
		if e > s {
			n += e - s
		}
	}
	return n
}

// intersect returns a ∩ b.
func intersect(a, b ivset) ivset {
	out := make(ivset, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s, e := max(a[i].s, b[j].s), min(a[i].e, b[j].e)
		if e > s {
			out = append(out, interval{s, e})
		}
		if a[i].e < b[j].e {
			i++
		} else {
			j++
		}
	}
	return out
}

// subtract returns a \ b.
func subtract(a, b ivset) ivset {
	out := make(ivset, 0, len(a)+len(b))
	j := 0
	for _, x := range a {
		s := x.s
		for j < len(b) && b[j].e <= s {
			j++
		}
		k := j
		for ; k < len(b) && b[k].s < x.e; k++ {
			if b[k].s > s {
				out = append(out, interval{s, b[k].s})
			}
			s = max(s, b[k].e)
		}
		if s < x.e {
			out = append(out, interval{s, x.e})
		}
	}
	return out
}

// unite returns a ∪ b.
func unite(a, b ivset) ivset {
	all := make([]interval, 0, len(a)+len(b))
	all = append(all, a...)
	all = append(all, b...)
	return unionOf(all)
}

// overlap returns |a ∩ b| without building the intersection.
func overlap(a, b ivset) int64 {
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if s, e := max(a[i].s, b[j].s), min(a[i].e, b[j].e); e > s {
			n += e - s
		}
		if a[i].e < b[j].e {
			i++
		} else {
			j++
		}
	}
	return n
}

// partition splits base among roles in priority order: each point of
// base goes to the first role covering it, or to none (owner -1). It calls
// emit for each piece, in time order, so callers total or bucket the
// pieces without building them.
//
// One sweep over base: at each point the owner is the first role covering
// it, and the owner's piece runs until its interval ends or an earlier
// role starts, whichever comes first.
func partition(base ivset, roles []ivset, emit func(owner int, s, e int64)) {
	at := make([]int, len(roles)) // per role: first interval ending after p
	for _, b := range base {
		for p := b.s; p < b.e; {
			owner, next := -1, b.e
			for r, set := range roles {
				j := at[r]
				for j < len(set) && set[j].e <= p {
					j++
				}
				at[r] = j
				if j == len(set) {
					continue
				}
				if set[j].s <= p {
					owner, next = r, min(next, set[j].e)
					break
				}
				next = min(next, set[j].s)
			}
			emit(owner, p, next)
			p = next
		}
	}
}
