package facts

import (
	"reflect"
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
	parts, rest := partition(ivset{{0, 100}}, []ivset{{{10, 30}}, {{20, 50}}, {{0, 5}, {90, 200}}})
	if !reflect.DeepEqual(parts, []ivset{{{10, 30}}, {{30, 50}}, {{0, 5}, {90, 100}}}) || !reflect.DeepEqual(rest, ivset{{5, 10}, {50, 90}}) {
		t.Errorf("partition = %v rest %v", parts, rest)
	}
}
