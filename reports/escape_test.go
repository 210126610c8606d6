package reports

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/internal/mdcheck"
	"github.com/stepdoctor/stepdoctor/rules"
)

// evilText is what a trace string, a script, an ignore reason or a file
// name may carry: markup, images, unsafe links (plain and entity-encoded),
// mentions and references, terminal escapes and a forged lint line.
const evilText = "<script>alert(1)</script> ![i](http://evil.example/x.png) [a](&#106;avascript:alert(1)) " +
	"<javascript:alert(2)> &#64;bob @alice @org/team #12 org/repo#3 GH-4 \\@carol ProfilerStep#7 " +
	"\x1b[31mred\x1b[0m\x07 bidi\u202eevil\nb.py:1:1: forged-rule forged\r\n"

// evilDoc is a team rule's doc written to attack the Markdown report.
const evilDoc = "Intro @dave and #5.\n\n![pic](http://example.com/x.png) ![alt][img] <img src=x onerror=alert(1)>\n\n" +
	"[one](javascript:alert(3)) [two](&#106;avascript:alert(4)) [three](JaVa&#x53;cript&colon;alert(5)) [four][r]\n\n" +
	"<a href=\"javascript:alert(6)\">x</a> <javascript:alert(7)> &#64;erin\n\n" +
	"`@code` stays, **bold @frank** and [@gina](https://example.com/@gina)\n\n" +
	"[r]: &#x6A;avascript:alert(8)\n[img]: http://example.com/y.png\n\n</details>\n\n```python\n@torch.compile\n```\n"

func assertSafeMarkdown(t *testing.T, what, md string) {
	t.Helper()
	if ps := mdcheck.Problems(md); len(ps) > 0 {
		t.Errorf("%s: unsafe Markdown:\n  %s\n--- output ---\n%s", what, strings.Join(ps, "\n  "), md)
	}
}

func assertNoControls(t *testing.T, what, s string) {
	t.Helper()
	if cs := mdcheck.ControlChars(s); len(cs) > 0 {
		t.Errorf("%s: control characters %v in\n%q", what, cs, s)
	}
}

// meanResult is hostile() with evilText in every string and evilDoc as the
// rule doc.
func meanResult() *engine.Result {
	r := hostile()
	tr := *r.Traces[0]
	tr.Input.Path = "runs/" + evilText + ".json"
	tr.Facts.Device.Name = evilText
	tr.Facts.TopKernels[0].Name = evilText
	tr.Facts.TopOps[0].Name = evilText
	tr.Facts.Steps[0].Name = evilText
	f := tr.Findings[0]
	f.Title, f.Message, f.Category, f.Doc = evilText, evilText, evilText, evilDoc
	f.References = []string{evilText, "javascript:alert(9)", "https://example.com/@h"}
	tr.Findings = []rules.Finding{f}
	tr.Health.Diagnostics[0].Message = evilText
	tr.NotEvaluated[0].Hint = evilText
	r.Traces = []*engine.TraceResult{&tr, r.Traces[1]}
	r.Notes = []string{evilText}
	r.Skipped = []engine.Skipped{{Path: evilText, Reason: evilText}}
	return r
}

func meanLint() *engine.LintResult {
	loc := &rules.Location{File: evilText, Line: 3, Column: 1}
	return &engine.LintResult{
		Scripts: []*engine.ScriptResult{{
			Path: "a.py\nb.py:9:9: forged " + evilText, RelPath: "a`b`` " + evilText,
			Findings: []rules.Finding{{Rule: "host-sync", Severity: rules.Severity(evilText), Message: evilText, Location: loc}},
			Suppressed: []engine.Suppressed{{Finding: rules.Finding{Rule: evilText, Location: loc}, Reason: evilText},
				{Finding: rules.Finding{Rule: "host-sync", Location: loc}, Reason: evilDoc}},
			Diagnostics: []script.Diagnostic{{Near: evilText, Message: evilText}},
			Partial:     true,
		}},
		Skipped: []engine.SkippedFile{{Path: evilText, RelPath: evilText, Reason: evilText}},
	}
}

func meanDiff() *engine.DiffResult {
	h := meanResult()
	h.Traces = h.Traces[:1]
	d := engine.Diff(h, gpuTraining())
	d.Unpaired = append(d.Unpaired, evilText)
	d.Pairs[0].Warnings = append(d.Pairs[0].Warnings, evilText)
	return d
}

// TestMarkdownOutputsAreInert parses every Markdown output on hostile input
// as GitHub would and walks the tree: no image, raw HTML (but the reports'
// own <details>), unsafe link or mention anywhere.
func TestMarkdownOutputsAreInert(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, meanResult()); err != nil {
		t.Fatal(err)
	}
	assertSafeMarkdown(t, "analyze md", b.String())
	if !strings.Contains(b.String(), "```python\n@torch.compile\n```") {
		t.Error("the doc's code block did not survive")
	}
	if !strings.Contains(b.String(), "[pic](http://example.com/x.png)") {
		t.Errorf("the doc's image did not become a link")
	}
	b.Reset()
	if err := DiffMarkdown(&b, meanDiff()); err != nil {
		t.Fatal(err)
	}
	assertSafeMarkdown(t, "diff md", b.String())
	b.Reset()
	if err := LintMarkdown(&b, meanLint()); err != nil {
		t.Fatal(err)
	}
	assertSafeMarkdown(t, "lint md", b.String())
}

// TestMarkdownDocFallsBack: a doc whose unsafe parts the edits cannot reach
// is shown as escaped text, still safe; a harmless doc is kept as written.
func TestMarkdownDoc(t *testing.T) {
	for _, doc := range []string{evilDoc, "[x](<&#106;avascript:1>)", "[x]\n\n[x]: <java\\script:1>", "a\n@b", "&commat;x",
		"![](x)", "!\\[x](y)", "\\![x](y)", "x![y](z)", "<![CDATA[x]]>", "[a](b 'c') [d]: e"} {
		assertSafeMarkdown(t, "MarkdownDoc("+doc+")", MarkdownDoc(doc))
	}
	plain := "Use `pin_memory=True`; see [the docs](https://pytorch.org/docs).\n\n- one\n- two\n\n```python\nx = 1\n```"
	if got := MarkdownDoc(plain); got != plain {
		t.Errorf("harmless doc changed:\n%s", got)
	}
}

func TestMarkdownTextBreaksMentions(t *testing.T) {
	for in, want := range map[string]string{
		"@alice":          "@\u200dalice",
		"a@b.c":           "a@b.c",
		"see #12":         "see #\u200d12",
		"ProfilerStep#12": "ProfilerStep#12",
		"org/repo#3":      "org/repo#\u200d3",
		"GH-4":            "GH\u200d-4",
	} {
		if got := MarkdownText(in); got != want {
			t.Errorf("MarkdownText(%q) = %q, want %q", in, got, want)
		}
	}
}

var lintLine = regexp.MustCompile(`^[^\n]+:\d+:\d+: \S+ `)

// TestTextOutputsHaveNoControls: the terminal renderers of analyze, diff
// and lint carry no control character from hostile strings, and lint's
// text output has exactly one file:line:col line per finding.
func TestTextOutputsHaveNoControls(t *testing.T) {
	var b strings.Builder
	if err := Text(&b, meanResult(), Terminal{}); err != nil {
		t.Fatal(err)
	}
	assertNoControls(t, "analyze text", b.String())
	b.Reset()
	if err := DiffText(&b, meanDiff()); err != nil {
		t.Fatal(err)
	}
	assertNoControls(t, "diff text", b.String())
	b.Reset()
	lr := meanLint()
	if err := LintText(&b, lr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	assertNoControls(t, "lint text", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(lr.Scripts[0].Findings) {
		t.Errorf("lint text has %d lines for %d findings (a forged line?):\n%s", len(lines), len(lr.Scripts[0].Findings), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "a.py b.py:9:9: forged") || !lintLine.MatchString(l) {
			t.Errorf("lint line %q", l)
		}
	}
}

var _ = io.Discard

// A doc that leaves a code fence open is closed at its end: in a report
// the open fence turned every later finding and table into code.
func TestMarkdownDocClosesFences(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"Why.\n\n```python\nx = 1\n", "Why.\n\n```python\nx = 1\n```\n"},
		{"a\n~~~~\nb\n```\nc", "a\n~~~~\nb\n```\nc\n~~~~\n"},
		{"````\n```\nstill code", "````\n```\nstill code\n````\n"},
		{"```\ncode\n```\nafter", "```\ncode\n```\nafter"},
		{"inline ``` not a fence ``` here", "inline ``` not a fence ``` here"},
	} {
		if got := MarkdownDoc(c.doc); got != c.want {
			t.Errorf("MarkdownDoc(%q) = %q, want %q", c.doc, got, c.want)
		}
	}
}
