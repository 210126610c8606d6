package facts

import (
	"cmp"
	"slices"
)

// ivset is a sorted set of disjoint, non-empty half-open intervals.
type ivset []interval

// unionOf returns the union of iv as an ivset (iv is not modified).
func unionOf(iv []interval) ivset {
	cp := make([]interval, 0, len(iv))
	for _, x := range iv {
		if x.e > x.s {
			cp = append(cp, x)
		}
	}
	if len(cp) == 0 {
		return nil
	}
	slices.SortFunc(cp, func(a, b interval) int { return cmp.Compare(a.s, b.s) })
	out := cp[:1]
	for _, x := range cp[1:] {
		last := &out[len(out)-1]
		if x.s <= last.e {
			last.e = max(last.e, x.e)
			continue
		}
		out = append(out, x)
	}
	return out
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

// partition splits base among roles in priority order: each role gets the
// part of base it covers that no earlier role claimed. It returns one
// ivset per role and the unclaimed rest.
func partition(base ivset, roles []ivset) (parts []ivset, rest ivset) {
	parts = make([]ivset, len(roles))
	rest = base
	for i, r := range roles {
		parts[i] = intersect(rest, r)
		rest = subtract(rest, parts[i])
	}
	return parts, rest
}
