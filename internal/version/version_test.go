package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/stepdoctor/stepdoctor", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	in := fromBuildInfo(bi)
	if got := in.Short(); got != "devel+3f2a9c1b7d4e-dirty" {
		t.Errorf("Short = %q", got)
	}
	long := in.Long()
	for _, want := range []string{"stepdoctor devel+3f2a9c1b7d4e-dirty", "3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345 (2026-11-30T10:00:00Z), dirty", "go1.26.8", "github.com/stepdoctor/stepdoctor (devel)"} {
		if !strings.Contains(long, want) {
			t.Errorf("Long lacks %q:\n%s", want, long)
		}
	}
	rel := fromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/stepdoctor/stepdoctor", Version: "v1.4.0"}})
	if rel.Short() != "v1.4.0" || !strings.Contains(rel.Long(), "revision: unknown") {
		t.Errorf("release: %q\n%s", rel.Short(), rel.Long())
	}
}

func TestSemantic(t *testing.T) {
	defer func(o string) { Override = o }(Override)
	for in, want := range map[string]string{
		"v1.4.0":                   "1.4.0",
		"devel":                    "0.0.0-devel",
		"devel+3f2a9c1b7d4e-dirty": "0.0.0-devel+3f2a9c1b7d4e.dirty",
		"test":                     "0.0.0-test",
	} {
		Override = in
		if got := Semantic(String()); got != want {
			t.Errorf("Semantic(%q) = %q, want %q", in, got, want)
		}
		if String() != in {
			t.Errorf("Override not used")
		}
	}
}
