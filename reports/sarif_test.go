package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/sariftest"
	"github.com/stepdoctor/stepdoctor/rules"
)

func lintScripts(t *testing.T, paths ...string) *engine.LintResult {
	t.Helper()
	res, err := engine.Lint(context.Background(), engine.LintOptions{Paths: paths, Root: "../testdata"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
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
	if err := sariftest.Validate(t, buf.Bytes()); err != nil {
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

// TestSARIFSchemaRejects proves the schema check can fail: each document
// breaks SARIF 2.1.0 itself, so every schema (subset and official) rejects it.
func TestSARIFSchemaRejects(t *testing.T) {
	for _, doc := range []string{
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "suppressions": [{"kind": "inline"}]}]}]}`,
		`{"version": "2.1.0", "runs": [{"results": []}]}`,
		// A notification descriptor needs an id, index or guid.
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "invocations": [{"executionSuccessful": true, "toolExecutionNotifications": [{"message": {"text": "m"}, "descriptor": {}}]}]}]}`,
	} {
		for name, rejected := range sariftest.Rejects(t, []byte(doc)) {
			if !rejected {
				t.Errorf("%s accepted %s", name, doc)
			}
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

// validateSARIF checks a SARIF document against the schema and decodes it.
func validateSARIF(t *testing.T, doc []byte) sarifLog {
	t.Helper()
	if err := sariftest.Validate(t, doc); err != nil {
		t.Fatalf("SARIF output does not validate: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(doc, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs", len(log.Runs))
	}
	d := log.Runs[0].Tool.Driver
	if d.Version != testVersion || d.SemanticVersion != "0.0.0-test" || d.InformationURI != InformationURI {
		t.Errorf("driver version %q semanticVersion %q informationUri %q", d.Version, d.SemanticVersion, d.InformationURI)
	}
	if _, ok := log.Runs[0].OriginalURIBaseIDs[sarifSrcRoot]; !ok {
		t.Error("no originalUriBaseIds entry for %SRCROOT%")
	}
	return log
}

// TestAnalyzeSARIF: every analyze fixture renders to valid SARIF; every
// finding is a result pointing at its rule, whose descriptor carries the
// doc as help Markdown and severity and category as properties; a finding
// joined to a script line and one naming a with_stack Python frame get that
// source line as their location (relative under %SRCROOT%, or an absolute
// file: URI), the trace as related location; the others point at the trace.
func TestAnalyzeSARIF(t *testing.T) {
	all := append(fixtures, struct {
		name string
		make func() *engine.Result
	}{"hostile", hostile})
	for _, fx := range all {
		t.Run(fx.name, func(t *testing.T) {
			r := fx.make()
			var buf bytes.Buffer
			if err := AnalyzeSARIF(&buf, r); err != nil {
				t.Fatal(err)
			}
			log := validateSARIF(t, buf.Bytes())
			run := log.Runs[0]
			n := 0
			for _, tr := range r.Traces {
				n += len(tr.Findings)
			}
			if len(run.Results) != n {
				t.Fatalf("%d results for %d findings", len(run.Results), n)
			}
			for _, res := range run.Results {
				rl := run.Tool.Driver.Rules[res.RuleIndex]
				if rl.ID != res.RuleID || rl.Help.Markdown == "" || rl.Properties["severity"] == "" || rl.Properties["category"] == nil {
					t.Errorf("result %s: rule %+v", res.RuleID, rl)
				}
				if len(res.Locations) != 1 || res.PartialFingerprints[SARIFFingerprintKey] == "" {
					t.Errorf("result %s: locations %+v", res.RuleID, res.Locations)
				}
			}
		})
	}

	r := gpuTraining()
	r.About.SourceRoot = ""
	tr := r.Traces[0]
	tr.Findings = append(tr.Findings,
		rules.Finding{Rule: "host-sync-in-loop", Title: "Host sync in the step loop", Severity: rules.SeverityHigh, Category: "script",
			Message: "train.py:12:9: .item() in the loop", Location: &rules.Location{File: "scripts/train.py", Line: 12, Column: 9}, Doc: "Avoid `.item()`."},
		rules.Finding{Rule: "idle-gap-sync", Title: "GPU idle on host syncs", Severity: rules.SeverityMedium, Category: "idle",
			Message: "the GPU waited 12 ms on aten::item at /home/alice/proj/train.py(40): step", Doc: "Syncs."},
		rules.Finding{Rule: "idle-gap-dataloader", Title: "GPU idle on the DataLoader", Severity: rules.SeverityLow, Category: "idle",
			Message: "the GPU waited on DataLoader __next__ at data/loader.py(7): fetch", Doc: "Workers."},
	)
	var buf bytes.Buffer
	if err := AnalyzeSARIF(&buf, r); err != nil {
		t.Fatal(err)
	}
	log := validateSARIF(t, buf.Bytes())
	want := map[string]struct {
		uri, base string
		line      int
		level     string
	}{
		"host-sync-in-loop":   {"scripts/train.py", "%SRCROOT%", 12, "error"},
		"idle-gap-sync":       {"file:///home/alice/proj/train.py", "", 40, "warning"},
		"idle-gap-dataloader": {"data/loader.py", "%SRCROOT%", 7, "note"},
	}
	found := 0
	for _, res := range log.Runs[0].Results {
		w, ok := want[res.RuleID]
		if !ok {
			loc := res.Locations[0].PhysicalLocation
			if loc.ArtifactLocation.URI != "log/run1/worker0.1712345678.pt.trace.json.gz" || loc.Region != nil {
				t.Errorf("%s: location %+v, want the trace file", res.RuleID, loc)
			}
			continue
		}
		found++
		loc := res.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI != w.uri || loc.ArtifactLocation.URIBaseID != w.base || loc.Region == nil || loc.Region.StartLine != w.line || res.Level != w.level {
			t.Errorf("%s: location %+v region %+v level %s, want %+v", res.RuleID, loc.ArtifactLocation, loc.Region, res.Level, w)
		}
		if len(res.RelatedLocations) != 1 || res.RelatedLocations[0].PhysicalLocation.ArtifactLocation.URI != "log/run1/worker0.1712345678.pt.trace.json.gz" {
			t.Errorf("%s: related %+v, want the trace", res.RuleID, res.RelatedLocations)
		}
	}
	if found != len(want) {
		t.Errorf("%d of %d located results", found, len(want))
	}
	if log.Runs[0].Invocations[0].CommandLine != r.About.Command {
		t.Errorf("commandLine %q", log.Runs[0].Invocations[0].CommandLine)
	}
}

// TestSARIFURIs: inside the root a path is relative to %SRCROOT%; outside
// it (and absolute without a root) it is an absolute file: URI with no
// uriBaseId, which code scanning would otherwise fail to map.
func TestSARIFURIs(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	for _, c := range []struct {
		root, path, uri, base string
	}{
		{root, filepath.Join(root, "src", "train me.py"), "src/train%20me.py", "%SRCROOT%"},
		{root, filepath.Join(other, "x.py"), "file://" + filepath.ToSlash(filepath.Join(other, "x.py")), ""},
		{"", "a/b.py", "a/b.py", "%SRCROOT%"},
		{"", "../b.py", "", ""},
		{"", "/abs/b.py", "file:///abs/b.py", ""},
		{root, "s3://bucket/run/rank0.pt.trace.json", "s3://bucket/run/rank0.pt.trace.json", ""},
	} {
		got := sarifArtifactFor(c.root, c.path)
		if c.uri == "" {
			if !strings.HasPrefix(got.URI, "file:///") || got.URIBaseID != "" {
				t.Errorf("%s: %+v, want an absolute file URI", c.path, got)
			}
			continue
		}
		if got.URI != c.uri || got.URIBaseID != c.base {
			t.Errorf("%s (root %q): %+v, want %s %s", c.path, c.root, got, c.uri, c.base)
		}
	}
}

// TestLintSARIFOutsideRoot: a script outside the root gets an absolute
// file: URI (no %SRCROOT%), and the driver names the version.
func TestLintSARIFOutsideRoot(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "train.py")
	if err := os.WriteFile(p, []byte("import torch\nfor x, y in loader:\n    loss = model(x)\n    loss.backward()\n    v = loss.item()\nmodel.cuda()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := engine.Lint(context.Background(), engine.LintOptions{Paths: []string{p}, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := SARIF(&buf, res); err != nil {
		t.Fatal(err)
	}
	log := validateSARIF(t, buf.Bytes())
	if len(log.Runs[0].Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range log.Runs[0].Results {
		a := r.Locations[0].PhysicalLocation.ArtifactLocation
		if a.URI != "file://"+filepath.ToSlash(p) || a.URIBaseID != "" {
			t.Errorf("%s: %+v, want file://%s", r.RuleID, a, p)
		}
	}
}

// assertInertSARIF validates doc and checks it with sariftest.Inert: every
// plain-text message has its brackets escaped, no string carries a control
// or bidi character, helpUri is a web URL, and every Markdown string parses
// to nothing unsafe (mdcheck: no image, raw HTML, unsafe link or mention).
func assertInertSARIF(t *testing.T, what string, doc []byte) {
	t.Helper()
	if err := sariftest.Validate(t, doc); err != nil {
		t.Fatalf("%s: SARIF output does not validate: %v", what, err)
	}
	problems, md, err := sariftest.Inert(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
	if len(md) == 0 {
		t.Errorf("%s: no Markdown help", what)
	}
	for _, m := range md {
		assertSafeMarkdown(t, what+" markdown", m)
		for _, bad := range []string{"<img", "<a ", "<script", "](javascript:", "<javascript:"} {
			if strings.Contains(m, bad) {
				t.Errorf("%s: markdown holds %q:\n%s", what, bad, m)
			}
		}
	}
}

// TestSARIFTextEscapes: SARIFText escapes brackets (SARIF 2.1.0 §3.11.6)
// and the backslashes before them, drops control and bidi characters,
// breaks mentions and keeps everything else; SARIFDocText keeps newlines.
func TestSARIFTextEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"[link](javascript:alert(1))":            `\[link\](javascript:alert(1))`,
		`a\[b`:                                   `a\\\[b`,
		`x\\]`:                                   `x\\\\\]`,
		`C:\dir\file.py <T> & "q"`:               `C:\dir\file.py <T> & "q"`,
		"rtl\u202eevil\u2066x\u2069 \x1b[31mred": `rtlevilx \[31mred`,
		"two\nlines\ttab\r\n":                    "two lines tab  ",
		"@octocat fixes #12 ProfilerStep#3":      "@\u200doctocat fixes #\u200d12 ProfilerStep#3",
	} {
		if got := SARIFText(in); got != want {
			t.Errorf("SARIFText(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := SARIFDocText("a [b]\r\n\n\tc\u202e @d"), "a \\[b\\]\n\n\tc @\u200dd"; got != want {
		t.Errorf("SARIFDocText = %q, want %q", got, want)
	}
}

// evilRuleDoc is the doc of a hostile team rule: raw HTML, unsafe and
// entity-encoded links, an image, a reference definition, mentions.
const evilRuleDoc = "**Why.** <img src=x onerror=alert(1)> <a href=\"javascript:alert(7)\">a</a> [r]: javascript:alert(9)\n" +
	"[ref][r] <http://ok.example> <javascript:alert(10)> [e](&#106;avascript:alert(11)) [d](data:text/html,x) <!-- c --> <script>alert(3)</script>\n" +
	"[click](javascript:alert(4)) ![img](http://evil.example/x.png) @octocat fixes #12 \u202eevil\n\n**Fix.** nothing\n"

// TestAnalyzeSARIFHostile: a hostile team rule (title, message, doc,
// references) and hostile trace strings (evilText in names, paths, rule
// errors) come out of AnalyzeSARIF valid and inert: help.markdown is the
// doc defused as in the Markdown report, message texts have every bracket
// escaped and no control or bidi character, helpUri is a web URL only.
func TestAnalyzeSARIFHostile(t *testing.T) {
	r := meanResult()
	team := rules.Finding{
		Rule: "team-evil", Title: "Evil <img src=x onerror=alert('t')> [t](javascript:alert(1)) @octocat #1 \u202e",
		Severity: rules.SeverityLow, Category: "kernel-efficiency",
		Message: "msg <script>alert('m')</script> [m](javascript:alert(2)) @octocat " + evilText,
		Doc:     evilRuleDoc, References: []string{"https://evil.example/<script>"},
	}
	r.Traces[0].Findings = append(r.Traces[0].Findings, team)
	r.RuleErrors = append(r.RuleErrors, engine.RuleError{Trace: r.Traces[0].Input.Path, Rule: "team-evil", Source: evilText, Message: evilText})
	var buf bytes.Buffer
	if err := AnalyzeSARIF(&buf, r); err != nil {
		t.Fatal(err)
	}
	assertInertSARIF(t, "analyze sarif", buf.Bytes())
	log := validateSARIF(t, buf.Bytes())
	for _, rl := range log.Runs[0].Tool.Driver.Rules {
		if rl.ID != "team-evil" {
			continue
		}
		if want := MarkdownDoc(evilRuleDoc); rl.Help.Markdown != want {
			t.Errorf("help.markdown is not the doc as the Markdown report shows it:\n%s\nwant\n%s", rl.Help.Markdown, want)
		}
		if rl.HelpURI != "https://evil.example/%3Cscript%3E" {
			t.Errorf("helpUri %q", rl.HelpURI)
		}
	}
}

// TestLintSARIFHostile: lint's SARIF with hostile rule docs, file names,
// messages, ignore reasons and diagnostics is valid and inert.
func TestLintSARIFHostile(t *testing.T) {
	lr := meanLint()
	lr.Rules = []rules.Rule{
		{ID: "host-sync", Title: evilText, Severity: rules.SeverityHigh, Category: "script", Doc: evilRuleDoc, References: []string{"javascript:alert(1)"}},
		{ID: evilText, Title: evilText, Severity: rules.SeverityLow, Category: "script", Doc: evilDoc},
	}
	lr.Scripts[0].RuleErrors = []string{evilText}
	var buf bytes.Buffer
	if err := SARIF(&buf, lr); err != nil {
		t.Fatal(err)
	}
	assertInertSARIF(t, "lint sarif", buf.Bytes())
}
