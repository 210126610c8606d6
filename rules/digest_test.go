package rules

import (
	"regexp"
	"testing"
)

func TestBuiltinDigest(t *testing.T) {
	d := BuiltinDigest()
	if !regexp.MustCompile(`^sha256:[0-9a-f]{12}$`).MatchString(d) {
		t.Fatalf("digest %q", d)
	}
	if BuiltinDigest() != d {
		t.Error("digest not stable")
	}
}
