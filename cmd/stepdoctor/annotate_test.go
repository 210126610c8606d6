package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// TestAnnotateFlag: analyze --annotate writes the trace with the findings
// added (gzip for .gz, read back by the project's reader), next to the
// report, and says so on stderr.
func TestAnnotateFlag(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "x.pt.trace.json")
	src := copyTrace(t, "dataloader_bound.pt.trace.json", in)
	for _, name := range []string{"annotated.json", "annotated.json.gz"} {
		out := filepath.Join(d, "out", name)
		os.MkdirAll(filepath.Dir(out), 0o755)
		code, _, stderr := runCLI(t, "analyze", "-o", filepath.Join(d, "out", "report.md"), "--annotate", out, in)
		if code != 0 || !strings.Contains(stderr, "wrote "+out) {
			t.Fatalf("%s: exit %d, stderr %q", name, code, stderr)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s is not gzip: %v", name, err)
			}
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(zr); err != nil {
				t.Fatal(err)
			}
			raw = buf.Bytes()
		}
		if !bytes.Contains(raw, []byte(`"cat":"stepdoctor","ph":"i"`)) || len(raw) <= len(src) {
			t.Errorf("%s holds no stepdoctor instants", name)
		}
		tr, err := trace.Parse(bytes.NewReader(raw), name)
		if err != nil {
			t.Fatalf("the reader rejects %s: %v", name, err)
		}
		if len(tr.Health.Diagnostics) > 0 {
			t.Errorf("%s: the reader repaired it: %v", name, tr.Health.Diagnostics)
		}
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, src) {
		t.Error("the input changed")
	}
}

// TestAnnotateFlagRefused: --annotate onto an input (however spelt), onto
// the report, with a name that is not a trace's, with stdin, or with
// several traces is refused with exit 2, and nothing is overwritten.
func TestAnnotateFlagRefused(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "log", "rank0.json")
	src := copyTrace(t, "dataloader_bound.pt.trace.json", in)
	copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "log", "rank1.json"))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"onto input", []string{"analyze", "--annotate", in, in}, "refuse output"},
		{"onto input via dotdot", []string{"analyze", "--annotate", filepath.Join(d, "log", "..", "log", "rank0.json"), in}, "refuse output"},
		{"into scanned dir", []string{"analyze", "--annotate", filepath.Join(d, "log", "new.json"), filepath.Join(d, "log")}, "refuse output"},
		{"onto report", []string{"analyze", "-o", filepath.Join(d, "r.json"), "--annotate", filepath.Join(d, "r.json"), in}, "report's output"},
		{"not a trace name", []string{"analyze", "--annotate", filepath.Join(d, "a.html"), in}, "name it .json or .json.gz"},
		{"a URL", []string{"analyze", "--annotate", "file://" + filepath.ToSlash(filepath.Join(d, "a.json")), in}, "goes to a local path"},
		{"stdin", []string{"analyze", "--annotate", filepath.Join(d, "a.json"), "-"}, "stdin"},
		{"several traces", []string{"analyze", "--annotate", filepath.Join(d, "a.json"), filepath.Join(d, "log", "rank0.json"), filepath.Join(d, "log", "rank1.json")}, "run analyze once per trace"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, src) {
		t.Error("the input changed")
	}
	if _, err := os.Stat(filepath.Join(d, "a.json")); err == nil {
		t.Error("a refused --annotate wrote its file")
	}
	// A directory of two ranks is refused once read, before the report.
	report := filepath.Join(d, "dir.md")
	code, _, stderr := runCLI(t, "analyze", "-o", report, "--annotate", filepath.Join(d, "a.json"), filepath.Join(d, "log"))
	if code != 2 || !strings.Contains(stderr, "2 were read; run analyze once per trace") {
		t.Errorf("directory of two ranks: exit %d, stderr %q; want 2 and the count read", code, stderr)
	}
	for _, p := range []string{report, filepath.Join(d, "a.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused --annotate wrote %s", p)
		}
	}
}

// TestAnnotateFlagDirOneTrace: a directory holding one trace and another
// .json file (not a trace, skipped by the read) is one trace to annotate.
func TestAnnotateFlagDirOneTrace(t *testing.T) {
	d := t.TempDir()
	copyTrace(t, "dataloader_bound.pt.trace.json", filepath.Join(d, "log", "rank0.json"))
	if err := os.WriteFile(filepath.Join(d, "log", "results.json"), []byte(`{"accuracy": 0.91, "epochs": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(d, "annotated.json")
	code, _, stderr := runCLI(t, "analyze", "-o", filepath.Join(d, "r.md"), "--annotate", out, filepath.Join(d, "log"))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
	}
	if !strings.Contains(stderr, "results.json") {
		t.Errorf("stderr %q does not list the skipped results.json", stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no annotated trace: %v", err)
	}
}

// TestAnnotateFailsBeforeReport: when the annotated trace cannot be
// written (its folder is missing) or would copy damage (a trace cut
// before its traceEvents array closes, repaired to be read), analyze
// exits 2 and leaves no report behind.
func TestAnnotateFailsBeforeReport(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "rank0.json")
	src := copyTrace(t, "dataloader_bound.pt.trace.json", in)
	cut := filepath.Join(d, "cut.json")
	if err := os.WriteFile(cut, src[:len(src)*7/10], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, trace, annotated, want string
	}{
		{"missing folder", in, filepath.Join(d, "nodir", "a.json"), "write annotated trace"},
		{"cut trace", cut, filepath.Join(d, "a.json"), "was repaired to be read"},
	} {
		report := filepath.Join(d, c.name+".html")
		code, _, stderr := runCLI(t, "analyze", "-o", report, "--annotate", c.annotated, c.trace)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
		for _, p := range []string{report, c.annotated} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s was written", c.name, p)
			}
		}
	}
}

// TestAnnotateNamedInHTML: the HTML report names the annotated trace it
// was written beside, instead of suggesting --annotate.
func TestAnnotateNamedInHTML(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "rank0.json")
	copyTrace(t, "dataloader_bound.pt.trace.json", in)
	report := filepath.Join(d, "r.html")
	if code, _, stderr := runCLI(t, "analyze", "-o", report, "--annotate", filepath.Join(d, "marked.json"), in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "marked.json</code> (written by <code>--annotate</code>)") || strings.Contains(s, "run with <code>--annotate out.json</code>") {
		t.Errorf("the HTML report does not name the annotated trace")
	}
}
