package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/reports"
)

type lintFlags struct {
	format   string
	failOn   string
	ruleDirs []string
	config   string
	// failOnRuleError: a failed or timed-out rule exits 1
	failOnRuleError bool
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

--format ` + reports.FormatNames(reports.ForLint) + ` (SARIF 2.1.0: paths inside the repository root relative
to %SRCROOT%, others absolute file: URIs).
A comment "# stepdoctor: ignore[rule-id] reason" on the line, or alone on the line
above, silences that rule there; the reason is kept in json and sarif output.

A rule that fails or times out is reported (stderr and every format) and the other
rules' findings stand.

Exit codes: 0 done; 1 a finding at or above --fail-on, or a failed rule with
--fail-on-rule-error; 2 usage or input error.`,
		Args: needArgs([]string{"FILE|DIR"}, -1, "a Python script or a directory searched for *.py"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lint(cmd.Context(), args, fl, stdout, stderr)
		},
	}
	c.Flags().StringVar(&fl.format, "format", "text", "output format: "+reports.FormatNames(reports.ForLint))
	c.Flags().StringVar(&fl.failOn, "fail-on", "", "exit 1 when a finding has this severity or higher: high, medium, low or info")
	addRulesFlag(c, &fl.ruleDirs)
	c.Flags().BoolVar(&fl.failOnRuleError, "fail-on-rule-error", false, ruleErrorHelp)
	addConfigFlag(c, &fl.config)
	return c
}

func lint(ctx context.Context, paths []string, fl lintFlags, stdout, stderr io.Writer) error {
	usage := func(err error) error { return &exitError{2, err} }
	format, err := reports.LookupFormat(reports.ForLint, fl.format)
	if err != nil {
		return usage(err)
	}
	render := format.Lint
	failBar, err := severityRank(fl.failOn)
	if err != nil {
		return usage(err)
	}
	set, cfg, err := loadRules(fl.config, fl.ruleDirs)
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
	res.About = about(ctx, cfg, fl.ruleDirs)
	if err := render(stdout, res); err != nil {
		return &exitError{2, fmt.Errorf("write lint report: %w", err)}
	}
	// Syntax errors and skipped files go to stderr in every format (json
	// and sarif also carry them: diagnostics / partial / skipped, and
	// toolExecutionNotifications).
	var failed []string
	for _, s := range res.Scripts {
		for _, d := range s.Diagnostics {
			fmt.Fprintf(stderr, "%s:%d:%d: %s\n", reports.TerminalText(s.Path), d.Line, d.Column, reports.TerminalText(d.Message))
		}
		for _, e := range s.RuleErrors {
			fmt.Fprintf(stderr, "warning: %s: %s\n", reports.TerminalText(s.Path), reports.TerminalText(e))
			failed = append(failed, s.Path+": "+e)
		}
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(stderr, "%s: skipped: %s\n", reports.TerminalText(sk.Path), reports.TerminalText(sk.Reason))
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
	return ruleFailure(fl.failOnRuleError || cfg.failOnRuleError(), failed)
}
