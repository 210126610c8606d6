package hugemem

import "testing"

// TestMake checks the slice Make returns, small (not advised) and large
// (advised where the kernel allows), and that it holds what is written.
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := Make[int64](n, n+5)
		if len(s) != n || cap(s) != n+5 {
			t.Fatalf("Make(%d, %d): len %d cap %d", n, n+5, len(s), cap(s))
		}
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("Make(%d): element %d = %d, want zero", n, i, s[i])
			}
			s[i] = int64(i)
		}
		s = append(s, 7)
		if s[n] != 7 || n > 0 && s[n-1] != int64(n-1) {
			t.Fatalf("Make(%d): contents lost", n)
		}
	}
}
