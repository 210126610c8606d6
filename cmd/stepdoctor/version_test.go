package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/internal/version"
)

const sampleTrace = "../../testdata/traces/dataloader_bound.pt.trace.json"

// TestVersion: --version and the version subcommand print the build
// information (version, module, revision line, Go version).
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, want := range []string{"stepdoctor ", "module:   github.com/stepdoctor/stepdoctor", "revision: ", "go:       go1."} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// TestReportsSayWhatMadeThem: every analyze format carries the version,
// the command line as given and the rule pack digest.
func TestReportsSayWhatMadeThem(t *testing.T) {
	defer func(o string) { version.Override = o }(version.Override)
	version.Override = "v9.8.7"
	dir := t.TempDir()
	digest := regexp.MustCompile(`builtin sha256:[0-9a-f]{12}`)
	for _, ext := range []string{".json", ".md", ".html", ".sarif"} {
		out := filepath.Join(dir, "report"+ext)
		code, _, errOut := runCLI(t, "analyze", "-o", out, sampleTrace)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.Contains(s, "9.8.7") || !digest.MatchString(s) {
			t.Errorf("%s: no version or rule pack digest", ext)
		}
		if ext == ".json" {
			var raw struct {
				Stepdoctor map[string]any `json:"stepdoctor"`
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			want := "stepdoctor analyze -o " + out + " " + sampleTrace
			if raw.Stepdoctor["command"] != want || raw.Stepdoctor["version"] != "v9.8.7" {
				t.Errorf("json stepdoctor = %v, want command %q", raw.Stepdoctor, want)
			}
		}
	}
}

func TestCommandLineQuoting(t *testing.T) {
	got := commandLine([]string{"analyze", "-o", "my report.md", "it's.json", "log/"})
	want := `stepdoctor analyze -o 'my report.md' 'it'\''s.json' log/`
	if got != want {
		t.Errorf("commandLine = %s, want %s", got, want)
	}
}

// TestAnalyzeSARIFWithScript: analyze -o x.sarif with --script writes a
// SARIF log whose joined script findings point at the script line, relative
// to the repository root, and whose driver names the version.
func TestAnalyzeSARIFWithScript(t *testing.T) {
	defer func(o string) { version.Override = o }(version.Override)
	version.Override = "v9.8.7"
	out := filepath.Join(t.TempDir(), "r.sarif")
	code, _, errOut := runCLI(t, "analyze", "--script", "../../testdata/scripts/every_mistake.py", "-o", out, sampleTrace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Version, SemanticVersion string
					Rules                    []struct{ ID string }
				}
			}
			Invocations []struct{ CommandLine string }
			Results     []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           *struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.Tool.Driver.Version != "v9.8.7" || run.Tool.Driver.SemanticVersion != "9.8.7" || len(run.Tool.Driver.Rules) == 0 {
		t.Errorf("driver %+v", run.Tool.Driver)
	}
	if !strings.Contains(run.Invocations[0].CommandLine, "--script ../../testdata/scripts/every_mistake.py") {
		t.Errorf("commandLine %q", run.Invocations[0].CommandLine)
	}
	_, err = os.Stat(filepath.Join(engine.SourceRoot(), ".git"))
	inRepo := err == nil
	script, traceOnly := 0, 0
	for _, r := range run.Results {
		pl := r.Locations[0].PhysicalLocation
		switch {
		// Relative to the repository root; a copy without .git has the
		// package directory as root, so the files are outside it.
		case (pl.ArtifactLocation.URI == "testdata/scripts/every_mistake.py" && pl.ArtifactLocation.URIBaseID == "%SRCROOT%" || !inRepo && strings.HasSuffix(pl.ArtifactLocation.URI, "/testdata/scripts/every_mistake.py")) && pl.Region != nil && pl.Region.StartLine > 0:
			script++
		case (pl.ArtifactLocation.URI == "testdata/traces/dataloader_bound.pt.trace.json" || !inRepo && strings.HasSuffix(pl.ArtifactLocation.URI, "/testdata/traces/dataloader_bound.pt.trace.json")) && pl.Region == nil:
			traceOnly++
		default:
			t.Errorf("%s: location %+v", r.RuleID, pl)
		}
	}
	if script == 0 || traceOnly == 0 {
		t.Errorf("%d results at script lines, %d at the trace; want both", script, traceOnly)
	}
}

// TestAnalyzeSARIFSharedTraceWithScript: analyze --format sarif on a real
// shared trace with --script writes a log that passes the SARIF schemas
// (runCLI validates it; in CI that includes the official OASIS schema) and
// carries the script's lines as physical locations.
func TestAnalyzeSARIFSharedTraceWithScript(t *testing.T) {
	dir := factstest.SharedTraces(t)
	trace := filepath.Join(dir, "tracelens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz")
	if _, err := os.Stat(trace); err != nil {
		t.Skipf("skipping: %v", err)
	}
	code, out, errOut := runCLI(t, "analyze", "--script", "../../testdata/scripts/every_mistake.py", "--format", "sarif", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           *struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	script, atTrace := 0, 0
	for _, r := range log.Runs[0].Results {
		pl := r.Locations[0].PhysicalLocation
		switch {
		case strings.HasSuffix(pl.ArtifactLocation.URI, "testdata/scripts/every_mistake.py") && pl.Region != nil && pl.Region.StartLine > 0:
			script++
		case strings.HasSuffix(pl.ArtifactLocation.URI, "train_resnet18.json.gz"):
			atTrace++
		}
	}
	if script == 0 || atTrace == 0 {
		t.Errorf("%d results at script lines, %d at the trace; want both", script, atTrace)
	}
}
