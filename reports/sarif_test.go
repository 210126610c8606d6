package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stepdoctor/stepdoctor/engine"
)

// sarifSchema compiles reports/testdata/sarif-2.1.0-subset.schema.json:
// the project's own draft-07 schema of the SARIF 2.1.0 objects stepdoctor
// writes, following the OASIS definitions. (The full public schema is not
// vendored: third-party files stay out of the repository.)
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-2.1.0-subset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lintScripts(t *testing.T, paths ...string) *engine.LintResult {
	t.Helper()
	res, err := engine.Lint(context.Background(), engine.LintOptions{Paths: paths, Root: "../testdata"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	schema := sarifSchema(t)
	res := lintScripts(t, "../testdata/scripts")
	// A syntax error adds a notification.
	bad := filepath.Join(t.TempDir(), "bad name.py")
	if err := os.WriteFile(bad, []byte("import torch\nfor x in loader:\n    x.item(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	more := lintScripts(t, bad)
	res.Scripts = append(res.Scripts, more.Scripts...)
	// A skipped non-Python file adds a notification without a region.
	res.Skipped = append(res.Skipped, engine.SkippedFile{Path: "../testdata/notes.txt", RelPath: "notes.txt", Reason: "not a Python file: .txt is not .py"})
	var buf bytes.Buffer
	if err := SARIF(&buf, res); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF output does not validate: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(res.Rules) || len(run.Results) == 0 {
		t.Fatalf("rules %d results %d", len(run.Tool.Driver.Rules), len(run.Results))
	}
	suppressed, fps := 0, map[string]bool{}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s points at rule %d", r.RuleID, r.RuleIndex)
		}
		uri := r.Locations[0].PhysicalLocation.ArtifactLocation.URI
		if strings.HasPrefix(uri, "/") || strings.Contains(uri, "..") || strings.Contains(uri, " ") {
			t.Errorf("uri %q is not a clean relative reference", uri)
		}
		fp := r.PartialFingerprints[SARIFFingerprintKey]
		if len(fp) != 32 || fps[fp] {
			t.Errorf("fingerprint %q missing or duplicated", fp)
		}
		fps[fp] = true
		if len(r.Suppressions) > 0 {
			suppressed++
			if r.Suppressions[0].Kind != "inSource" || r.Suppressions[0].Justification == "" {
				t.Errorf("suppression %+v", r.Suppressions[0])
			}
		}
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1 (image_classification.py)", suppressed)
	}
	if n := len(run.Invocations[0].Notifications); n != 2 {
		t.Errorf("%d notifications, want 2 (a syntax error, a skipped file)", n)
	}
	if !strings.Contains(buf.String(), `"uri": "scripts/every_mistake.py"`) {
		t.Error("paths are not relative to the root")
	}
}

// TestSARIFSchemaRejects proves the schema test can fail.
func TestSARIFSchemaRejects(t *testing.T) {
	schema := sarifSchema(t)
	for _, doc := range []string{
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "suppressions": [{"kind": "inline"}]}]}]}`,
		`{"version": "2.1.0", "runs": [{"results": []}]}`,
		// A notification descriptor needs an id, index or guid.
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "invocations": [{"executionSuccessful": true, "toolExecutionNotifications": [{"message": {"text": "m"}, "descriptor": {}}]}]}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("schema accepted %s", doc)
		}
	}
}

// TestSARIFFingerprintsSurviveLineShifts: inserting lines above a finding
// keeps its fingerprint.
func TestSARIFFingerprintsSurviveLineShifts(t *testing.T) {
	src := "import torch\nfor x, y in loader:\n    loss = model(x)\n    loss.backward()\n    v = loss.item()\nmodel.cuda()\n"
	fp := func(src string) map[string]bool {
		dir := t.TempDir()
		p := filepath.Join(dir, "train.py")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := engine.Lint(context.Background(), engine.LintOptions{Paths: []string{p}, Root: dir})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := SARIF(&buf, res); err != nil {
			t.Fatal(err)
		}
		var log sarifLog
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range log.Runs[0].Results {
			out[r.RuleID+" "+r.PartialFingerprints[SARIFFingerprintKey]] = true
		}
		return out
	}
	a, b := fp(src), fp("# a comment\n\n"+src)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("results %v vs %v", a, b)
	}
	for k := range a {
		if !b[k] {
			t.Errorf("fingerprint %s changed when lines were inserted above", k)
		}
	}
}

func TestSARIFDeterministicAndNil(t *testing.T) {
	res := lintScripts(t, "../testdata/scripts/every_mistake.py")
	var a, b bytes.Buffer
	if err := SARIF(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := SARIF(&b, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("SARIF output is not deterministic")
	}
	if err := SARIF(&a, nil); err == nil {
		t.Error("nil result accepted")
	}
}
