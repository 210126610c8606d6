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
func LintText(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	for _, s := range r.Scripts {
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "%s:%d:%d: %s %s\n", s.Path, f.Location.Line, f.Location.Column, f.Rule, oneLine(f.Message))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// LintMarkdown writes a table per script, fit for a PR comment.
func LintMarkdown(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	b.WriteString("# stepdoctor lint\n")
	n := 0
	for _, s := range r.Scripts {
		n += len(s.Findings)
	}
	fmt.Fprintf(&b, "\n%d finding(s) in %d script(s).\n", n, len(r.Scripts))
	for _, s := range r.Scripts {
		fmt.Fprintf(&b, "\n## `%s`\n\n", lintMDCode(s.RelPath))
		if len(s.Findings) == 0 {
			b.WriteString("No findings.\n")
		} else {
			b.WriteString("| line | rule | severity | finding |\n|---:|---|---|---|\n")
			for _, f := range s.Findings {
				fmt.Fprintf(&b, "| %d:%d | `%s` | %s | %s |\n", f.Location.Line, f.Location.Column, f.Rule, f.Severity, lintMDCell(f.Message))
			}
		}
		if len(s.Suppressed) > 0 {
			b.WriteString("\nSilenced by `# stepdoctor: ignore[...]`:\n\n")
			for _, sp := range s.Suppressed {
				fmt.Fprintf(&b, "- line %d `%s`: %s\n", sp.Location.Line, sp.Rule, lintMDCell(sp.Reason))
			}
		}
		if s.Partial {
			b.WriteString("\n**Partly checked:** syntax errors hid parts of this file from the rules.\n")
		}
		for _, d := range s.Diagnostics {
			fmt.Fprintf(&b, "\n> line %d:%d: %s\n", d.Line, d.Column, lintMDCell(d.Message))
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, sk := range r.Skipped {
			fmt.Fprintf(&b, "- `%s`: %s\n", lintMDCode(sk.RelPath), lintMDCell(sk.Reason))
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

// lintMDCode keeps s inside a code span: one line, backticks replaced.
func lintMDCode(s string) string { return strings.ReplaceAll(oneLine(s), "`", "'") }

// lintMDCell makes s one table cell: one line, pipes and tags escaped.
func lintMDCell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return s
}
