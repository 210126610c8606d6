package reports

import "testing"

func TestFmtFLOPS(t *testing.T) {
	for x, want := range map[float64]string{1307.4e12: "1.3 PFLOP/s", 298.5e12: "298.5 TFLOP/s", 26e12: "26.0 TFLOP/s", 4.2e9: "4.2 GFLOP/s", 12: "12 FLOP/s"} {
		if got := fmtUnit(x, "flops_per_s"); got != want {
			t.Errorf("fmtUnit(%g) = %q, want %q", x, got, want)
		}
	}
}
