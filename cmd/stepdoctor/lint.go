package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/reports"
	"github.com/stepdoctor/stepdoctor/rules"
)

type lintFlags struct {
	format   string
	failOn   string
	ruleDirs []string
}

func lintCmd(stdout, stderr io.Writer) *cobra.Command {
	var fl lintFlags
	c := &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Check Python training scripts for performance mistakes before review",
		Long: `lint parses Python training scripts (directories are searched recursively for *.py)
and reports the performance mistakes a profile would later show: single-process
DataLoaders, host syncs and blocking copies in the step loop, missing autocast,
DataParallel, profiler misconfiguration, ... One line per finding:

  file:line:col: rule-id message

--format md, json or sarif (SARIF 2.1.0, paths relative to the repository root).
A comment "# stepdoctor: ignore[rule-id] reason" on the line, or alone on the line
above, silences that rule there; the reason is kept in json and sarif output.

Exit codes: 0 done; 1 a finding at or above --fail-on; 2 usage or input error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lint(cmd.Context(), args, fl, stdout, stderr)
		},
	}
	c.Flags().StringVar(&fl.format, "format", "text", "output format: text, md, json or sarif")
	c.Flags().StringVar(&fl.failOn, "fail-on", "", "exit 1 when a finding has this severity or higher: high, medium, low or info")
	c.Flags().StringArrayVar(&fl.ruleDirs, "rules", nil, "load team rules (*.rego, *.yaml) from `DIR` as well (repeatable)")
	return c
}

var lintRenderers = map[string]func(io.Writer, *engine.LintResult) error{
	"text":  lintText,
	"md":    lintMarkdown,
	"json":  lintJSON,
	"sarif": reports.SARIF,
}

func lint(ctx context.Context, paths []string, fl lintFlags, stdout, stderr io.Writer) error {
	usage := func(err error) error { return &exitError{2, err} }
	render, ok := lintRenderers[fl.format]
	if !ok {
		return usage(fmt.Errorf("parse --format: unknown format %q (want text, md, json or sarif)", fl.format))
	}
	failBar, err := severityRank(fl.failOn)
	if err != nil {
		return usage(err)
	}
	set, err := rules.Load(fl.ruleDirs...)
	if err != nil {
		return usage(err)
	}
	listSkippedRules(stderr, set)
	res, err := engine.Lint(ctx, engine.LintOptions{Paths: paths, Rules: set})
	if err != nil {
		var ie *engine.InputError
		if errors.As(err, &ie) || res == nil {
			return usage(err)
		}
		return &exitError{2, err}
	}
	if err := render(stdout, res); err != nil {
		return &exitError{2, fmt.Errorf("write lint report: %w", err)}
	}
	// Syntax errors and skipped files go to stderr in every format (json
	// and sarif also carry them: diagnostics / partial / skipped, and
	// toolExecutionNotifications).
	for _, s := range res.Scripts {
		for _, d := range s.Diagnostics {
			fmt.Fprintf(stderr, "%s:%d:%d: %s\n", s.Path, d.Line, d.Column, d.Message)
		}
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(stderr, "%s: skipped: %s\n", sk.Path, sk.Reason)
	}
	if failBar > 0 {
		for _, s := range res.Scripts {
			for _, f := range s.Findings {
				if sev, _ := severityRank(string(f.Severity)); sev >= failBar {
					return &exitError{1, fmt.Errorf("%s:%d: finding %s (%s) is at or above --fail-on %s", s.Path, f.Location.Line, f.Rule, f.Severity, fl.failOn)}
				}
			}
		}
	}
	return nil
}

// lintText writes one line per finding: file:line:col: rule-id message.
func lintText(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	for _, s := range r.Scripts {
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "%s:%d:%d: %s %s\n", s.Path, f.Location.Line, f.Location.Column, f.Rule, oneLine(f.Message))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// lintMarkdown writes a table per script, fit for a PR comment.
func lintMarkdown(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	b.WriteString("# stepdoctor lint\n")
	n := 0
	for _, s := range r.Scripts {
		n += len(s.Findings)
	}
	fmt.Fprintf(&b, "\n%d finding(s) in %d script(s).\n", n, len(r.Scripts))
	for _, s := range r.Scripts {
		fmt.Fprintf(&b, "\n## `%s`\n\n", mdCode(s.RelPath))
		if len(s.Findings) == 0 {
			b.WriteString("No findings.\n")
		} else {
			b.WriteString("| line | rule | severity | finding |\n|---:|---|---|---|\n")
			for _, f := range s.Findings {
				fmt.Fprintf(&b, "| %d:%d | `%s` | %s | %s |\n", f.Location.Line, f.Location.Column, f.Rule, f.Severity, mdCell(f.Message))
			}
		}
		if len(s.Suppressed) > 0 {
			b.WriteString("\nSilenced by `# stepdoctor: ignore[...]`:\n\n")
			for _, sp := range s.Suppressed {
				fmt.Fprintf(&b, "- line %d `%s`: %s\n", sp.Location.Line, sp.Rule, mdCell(sp.Reason))
			}
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
			fmt.Fprintf(&b, "- `%s`: %s\n", mdCode(sk.RelPath), mdCell(sk.Reason))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// lintJSON writes the LintResult (schema_version, rules, scripts with
// findings, suppressed findings with their reason, diagnostics).
func lintJSON(w io.Writer, r *engine.LintResult) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode lint json: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func mdCode(s string) string { return strings.ReplaceAll(oneLine(s), "`", "'") }

func mdCell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return s
}
