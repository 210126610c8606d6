package trace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestParseNSFastForms: the shortcuts for whole and three-decimal
// microseconds give what the general decimal path gives.
func TestParseNSFastForms(t *testing.T) {
	general := func(b []byte) (int64, bool) {
		m, e, neg, ok := decimal(b)
		if !ok {
			return 0, false
		}
		return scaleInt(m, e, neg, 3)
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"0", "1.000", "0.001", "1606910597590288.000", "9007199254740991.999", "9007199254740992.000", "12.5", "12.34", "-1.500", "1.0001", ".123", "1e3", "1.00a", "-0"}
	for range 2000 {
		inputs = append(inputs, strconv.FormatInt(r.Int64N(1<<53), 10)+"."+strconv.Itoa(1000 + r.IntN(1000))[1:])
		inputs = append(inputs, strconv.FormatInt(r.Int64N(1<<53), 10)+".0"+strconv.Itoa(r.IntN(10))+strconv.Itoa(r.IntN(10)))
	}
	for _, in := range inputs {
		got, gok := parseNS([]byte(in))
		want, wok := general([]byte(in))
		if got != want || gok != wok {
			t.Errorf("parseNS(%q) = %d, %v; the decimal path gives %d, %v", in, got, gok, want, wok)
		}
	}
}
