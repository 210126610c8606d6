package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
)

// Renderers of stepdoctor lint results (SARIF is in sarif.go).

// LintText writes one line per finding: file:line:col: rule-id message.
// File names and messages go through TerminalText, so a name with a newline
// or an escape sequence cannot forge a line for a CI problem matcher.
func LintText(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	for _, s := range r.Scripts {
		for _, e := range s.RuleErrors {
			fmt.Fprintf(&b, "%s: rule failed: %s\n", TerminalText(s.Path), TerminalText(e))
		}
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "%s:%d:%d: %s %s\n", TerminalText(s.Path), f.Location.Line, f.Location.Column, TerminalText(f.Rule), oneLine(TerminalText(f.Message)))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// LintMarkdown writes a table per script, fit for a PR comment. Every
// string from a script (paths, messages, ignore-comment rules and reasons)
// goes through MarkdownText or MarkdownCode.
func LintMarkdown(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	b.WriteString("# stepdoctor lint\n")
	n := 0
	for _, s := range r.Scripts {
		n += len(s.Findings)
	}
	fmt.Fprintf(&b, "\n%d finding(s) in %d script(s).\n", n, len(r.Scripts))
	for _, s := range r.Scripts {
		fmt.Fprintf(&b, "\n## %s\n\n", mdCodeSpan(s.RelPath))
		if len(s.Findings) == 0 {
			b.WriteString("No findings.\n")
		} else {
			b.WriteString("| line | rule | severity | finding |\n|---:|---|---|---|\n")
			for _, f := range s.Findings {
				fmt.Fprintf(&b, "| %d:%d | %s | %s | %s |\n", f.Location.Line, f.Location.Column, mdCode(f.Rule), mdCell(string(f.Severity)), mdCell(f.Message))
			}
		}
		if len(s.Suppressed) > 0 {
			b.WriteString("\nSilenced by `# stepdoctor: ignore[...]`:\n\n")
			for _, sp := range s.Suppressed {
				fmt.Fprintf(&b, "- line %d %s: %s\n", sp.Location.Line, mdCode(sp.Rule), mdCell(sp.Reason))
			}
		}
		for _, e := range s.RuleErrors {
			fmt.Fprintf(&b, "\n> **Rule failed**, so findings may be missing: %s\n", mdText(e))
		}
		if s.Partial {
			b.WriteString("\n**Partly checked:** syntax errors hid parts of this file from the rules.\n")
		}
		for _, d := range s.Diagnostics {
			fmt.Fprintf(&b, "\n> line %d:%d: %s\n", d.Line, d.Column, mdCell(d.Message))
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, sk := range r.Skipped {
			fmt.Fprintf(&b, "- %s: %s\n", mdCodeSpan(sk.RelPath), mdCell(sk.Reason))
		}
	}
	_, err := io.WriteString(w, buildAbout(r.About).markdownFooter(b.String()))
	return err
}

// LintJSON writes the LintResult (schema_version, rules, scripts with
// findings, suppressed findings with their reason, diagnostics) and a
// "stepdoctor" object (version, command, rule pack).
func LintJSON(w io.Writer, r *engine.LintResult) error {
	if r == nil {
		return fmt.Errorf("render lint json: %w", errNilResult)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	doc := struct {
		*engine.LintResult
		Stepdoctor aboutJSON `json:"stepdoctor"`
	}{r, buildAbout(r.About).json()}
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode lint json: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// oneLine joins the lines of s with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdCodeSpan shows s (a file name) in a code span on one line, outside
// tables: control characters removed, the fence longer than any run of
// backticks in s.
func mdCodeSpan(s string) string {
	s = oneLine(clean(s))
	if s == "" {
		return nullMark
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
