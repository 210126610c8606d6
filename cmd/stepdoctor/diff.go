package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/reports"
	"github.com/stepdoctor/stepdoctor/rules"
)

func diffCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var out, format, config, stepMarker string
	var failOnRuleError bool
	var ruleDirs []string
	var rf readFlags
	c := &cobra.Command{
		Use:   "diff BEFORE AFTER",
		Short: "Compare two analyses of the same workload: speed-up, fact changes beyond noise, findings resolved and new",
		Long: `diff analyzes BEFORE and AFTER (trace files, directories of rank traces, or facts
files from stepdoctor facts) and compares them trace by trace (by rank when there
are several): the step-time speed-up, facts that changed beyond the steps' own
spread (smaller changes are marked as noise), and findings resolved, new and
unchanged. Output as for analyze: terminal by default, -o FILE (` + reports.ExtensionNames(reports.ForDiff) + `).`,
		Args: needArgs([]string{"BEFORE", "AFTER"}, 2, "each a trace file, a directory of rank traces or a facts file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-" && args[1] == "-" {
				return &exitError{2, fmt.Errorf("parse paths: - (stdin) given for both BEFORE and AFTER; it can be read once")}
			}
			if out == "-" {
				out = "" // standard output, as for facts
			}
			if err := checkOutput(out, traceInputs(args...)); err != nil {
				return err
			}
			cfg, err := loadConfig(config)
			if err != nil {
				return &exitError{2, err}
			}
			fcfg, err := cfg.factsWith(stepMarker)
			if err != nil {
				return &exitError{2, err}
			}
			// The rules compile beside the reading of BEFORE, once for both.
			compiled := sync.OnceValues(func() (*rules.Set, error) { return cfg.rules(ruleDirs) })
			opts := engine.Options{LoadRules: compiled, Facts: fcfg, Stdin: stdin}
			done := rf.watch(&opts, stderr)
			d, err := diffPaths(cmd.Context(), args[0], args[1], opts)
			done()
			if err != nil {
				return err
			}
			ruleErrs := reports.DiffRuleErrorLines(d)
			for _, line := range ruleErrs {
				fmt.Fprintf(stderr, "warning: %s\n", reports.TerminalText(line))
			}
			d.About = about(cmd.Context(), cfg, ruleDirs)
			f, err := chooseFormat(reports.ForDiff, format, objstore.Name(out))
			if err != nil {
				return &exitError{2, err}
			}
			render := func(w io.Writer) error { return f.Diff(w, d) }
			if out != "" {
				if err := writeOutput(cmd.Context(), out, render); err != nil {
					return &exitError{2, fmt.Errorf("write diff: %w", err)}
				}
				rf.say(stderr, "wrote %s\n", out)
			} else if err := render(stdout); err != nil {
				return &exitError{2, err}
			}
			return ruleFailure(failOnRuleError || cfg.failOnRuleError(), ruleErrs)
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the comparison to `FILE` (format from the extension: "+reports.ExtensionNames(reports.ForDiff)+")")
	addConfigFlag(c, &config)
	addStepMarkerFlag(c, &stepMarker)
	addReadFlags(c, &rf)
	c.Flags().BoolVar(&failOnRuleError, "fail-on-rule-error", false, ruleErrorHelp)
	addRulesFlag(c, &ruleDirs)
	c.Flags().StringVar(&format, "format", "", reports.FormatNames(reports.ForDiff)+" (overrides the -o extension)")
	return c
}

// diffPaths analyzes both sides with the rules and fact thresholds of opts
// and compares them.
func diffPaths(ctx context.Context, before, after string, opts engine.Options) (*engine.DiffResult, error) {
	var res [2]*engine.Result
	for i, p := range []string{before, after} {
		o := opts
		o.Paths = []string{p}
		r, err := engine.Analyze(ctx, o)
		if err != nil {
			return nil, &exitError{2, err}
		}
		res[i] = r
	}
	d := engine.Diff(res[0], res[1])
	if len(d.Pairs) == 0 {
		return nil, &exitError{2, fmt.Errorf("compare %s with %s: no trace pairs up (%s)", before, after, strings.Join(d.Unpaired, "; "))}
	}
	return d, nil
}

// parseBound reads a regression bound: "10%" or "0.1".
func parseBound(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		// NaN compares false with every slowdown: it would pass them all.
		return 0, fmt.Errorf("parse --max-regression: %q is not a percentage such as 10%% or a fraction such as 0.1", s)
	}
	if pct {
		v /= 100
	} else if v > 1 {
		return 0, fmt.Errorf("parse --max-regression: %q is ambiguous: write %s%% for a percentage (a bare number is a fraction, 0.1 = 10%%)", s, t)
	}
	return v, nil
}
