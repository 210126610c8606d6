package facts_test

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestConfigWithDefaults: a partly filled Config keeps the defaults of the
// fields it leaves out (it used to zero them: no chain was ever shorter
// than 0 kernels, no examples were kept).
func TestConfigWithDefaults(t *testing.T) {
	got := facts.Config{ShortKernelNS: 5_000}.WithDefaults()
	want := facts.DefaultConfig()
	want.ShortKernelNS = 5_000
	if got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
	if got := (facts.Config{}).WithDefaults(); got != facts.DefaultConfig() {
		t.Errorf("zero Config = %+v", got)
	}
}
