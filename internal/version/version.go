// Package version says which build of stepdoctor is running, from the
// module and VCS information the Go toolchain stamps into the binary
// (runtime/debug.ReadBuildInfo), so a report or a bug report can be tied to
// a build.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Override, when not empty, replaces the version everywhere it is shown.
// Tests set it so reports stay byte-identical across builds.
var Override string

// Info describes a build.
type Info struct {
	Module    string // module path, "github.com/stepdoctor/stepdoctor"
	Version   string // module version: "v1.2.0" (go install ...@v1.2.0), "(devel)" from a checkout
	Revision  string // VCS commit, "" when not stamped (go run, go test, -buildvcs=false)
	Time      string // commit time, RFC 3339
	Dirty     bool   // the working tree had changes
	GoVersion string // toolchain that built the binary
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: "github.com/stepdoctor/stepdoctor", Version: "(unknown)"}
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Module == "" {
		in.Module = "github.com/stepdoctor/stepdoctor"
	}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Dirty = s.Value == "true"
		}
	}
	return in
}

// Short is the version in one word: the module version when it is a
// release ("v1.2.0"; a pseudo-version already names its commit), else
// "devel" with the first 12 digits of the revision and "-dirty" when the
// tree had changes ("devel+3f2a9c1b7d4e-dirty"), else "devel".
func (in Info) Short() string {
	if in.Version != "" && in.Version != "(devel)" && in.Version != "(unknown)" {
		v := in.Version
		if in.Dirty && !strings.Contains(v, "dirty") {
			v += "+dirty"
		}
		return v
	}
	s := "devel"
	if in.Revision != "" {
		s += "+" + shortRev(in.Revision)
	}
	if in.Dirty {
		s += "-dirty"
	}
	return s
}

// Long is what `stepdoctor --version` prints: the short version, then the
// module, revision (with the commit time and dirty flag) and Go version.
func (in Info) Long() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stepdoctor %s\n", in.Short())
	fmt.Fprintf(&b, "  module:   %s %s\n", in.Module, in.Version)
	rev := in.Revision
	if rev == "" {
		rev = "unknown (built without VCS information: go run, go test or -buildvcs=false)"
	} else {
		if in.Time != "" {
			rev += " (" + in.Time + ")"
		}
		if in.Dirty {
			rev += ", dirty: the working tree had uncommitted changes"
		}
	}
	fmt.Fprintf(&b, "  revision: %s\n", rev)
	fmt.Fprintf(&b, "  go:       %s\n", in.GoVersion)
	return b.String()
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}

// String is the version reports carry: Override when set, else
// Read().Short().
func String() string {
	if Override != "" {
		return Override
	}
	return Read().Short()
}

// Semantic turns a version as String gives it into one for SARIF's
// semanticVersion (Semantic Versioning 2.0.0): the release without its
// "v", else "0.0.0-devel" with the revision as build metadata.
func Semantic(v string) string {
	if strings.HasPrefix(v, "v") && len(v) > 1 && v[1] >= '0' && v[1] <= '9' {
		return v[1:]
	}
	if rest, ok := strings.CutPrefix(v, "devel"); ok {
		rest = strings.TrimPrefix(rest, "+")
		rest = strings.ReplaceAll(rest, "-dirty", ".dirty")
		if rest == "" {
			return "0.0.0-devel"
		}
		return "0.0.0-devel+" + rest
	}
	return "0.0.0-" + sanitizeSemver(v)
}

func sanitizeSemver(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}
