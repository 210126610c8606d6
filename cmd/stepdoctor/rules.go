package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/stepdoctor/stepdoctor/reports"
	"github.com/stepdoctor/stepdoctor/rules"
	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

func rulesCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		dirs   []string
		config string
	)
	c := &cobra.Command{
		Use:   "rules",
		Short: "List, show, test and document rules",
		Long: `rules works on the built-in pack plus team rule directories (--rules DIR, and the
rules: list of .stepdoctor.yaml, found in the current directory or given with --config).
The configuration's disable, severity and params apply to list, show and doc; test runs
the rules as written (each case pins its own params).`,
		// An unknown subcommand is a usage error, not a help page.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{2, fmt.Errorf("unknown rules subcommand %q: want list, show, test or doc", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.PersistentFlags().StringArrayVar(&dirs, "rules", nil, "also load team rules from `DIR` (repeatable)")
	c.PersistentFlags().StringVar(&config, "config", "", configHelp)
	load := func() (*rules.Set, error) {
		s, _, err := loadRules(config, dirs)
		if err != nil {
			return nil, &exitError{2, err}
		}
		listSkippedRules(stderr, s)
		return s, nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the loaded rules: id, severity (the most a finding gets), category, title",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := load()
			if err != nil {
				return err
			}
			// Columns sized to the longest entry, so a team rule's long id
			// does not push its row out of line.
			w := &errWriter{w: stdout}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, r := range set.Rules() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneField(r.ID), r.Severity, oneField(r.Category), oneField(r.Title))
			}
			return w.check("write rule list", tw.Flush())
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a rule's documentation, params and references",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := load()
			if err != nil {
				return err
			}
			r, ok := set.Rule(args[0])
			if !ok {
				return &exitError{2, fmt.Errorf("show rule %s: no such enabled rule (see stepdoctor rules list)", args[0])}
			}
			w := &errWriter{w: stdout}
			writeRuleDoc(w, r, "#")
			return w.check("write rule "+r.ID, nil)
		},
	}
	doc := &cobra.Command{
		Use:   "doc",
		Short: "Write the Markdown catalogue of all rules (docs/RULES.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := load()
			if err != nil {
				return err
			}
			w := &errWriter{w: stdout}
			writeCatalogue(w, set.Rules())
			return w.check("write rule catalogue", nil)
		},
	}
	test := &cobra.Command{
		Use:   "test [DIR...]",
		Short: "Run rule tests like opa test: YAML cases (DIR/cases/*.yaml) and Rego test_ rules (DIR/*_test.rego)",
		Long: `test runs every YAML case file in DIR/cases against the built-in pack plus DIR's rules,
and every Rego test rule (test_*) in DIR/*_test.rego. Without DIR it runs the built-in
pack's cases. It prints PASS or FAIL per test and exits 1 when any test fails.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := &errWriter{w: stdout}
			err := runRuleTests(cmd.Context(), w, dirs, args)
			return w.check("write rule test results", err)
		},
	}
	c.AddCommand(list, show, doc, test)
	return c
}

// oneField keeps s in one tabwriter cell, safe on a terminal.
func oneField(s string) string {
	// TerminalText turns tabs and newlines into spaces and drops the other
	// control characters: a team rule's title could carry terminal
	// escapes (set the window title, clear the screen).
	return reports.TerminalText(s)
}

// errWriter keeps the first write error, so that commands that print with
// fmt.Fprintf can check it once at the end (stdout may be a full disk or a
// closed pipe).
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// check returns a write error (exit 2) before err: a failed test run whose
// report could not be written is a failure to report.
func (e *errWriter) check(what string, err error) error {
	if e.err != nil {
		return &exitError{2, fmt.Errorf("%s: %w", what, e.err)}
	}
	return err
}

// runRuleTests runs the cases and Rego tests of each directory (the
// built-in pack when none is given).
func runRuleTests(ctx context.Context, stdout io.Writer, extra, dirs []string) error {
	var all []rules.CaseResult
	if len(dirs) == 0 {
		set, err := rules.Load(extra...)
		if err != nil {
			return &exitError{2, err}
		}
		res, err := rules.RunCasesFS(set, builtin.FS, "cases")
		if err != nil {
			return &exitError{2, err}
		}
		for i := range res {
			res[i].File = filepath.ToSlash(filepath.Join("builtin", res[i].File))
		}
		all = append(all, res...)
	}
	var untested []string
	var base *rules.Set // the rules each directory is tested on top of
	if len(dirs) > 0 {
		var err error
		if base, err = rules.Load(extra...); err != nil {
			return &exitError{2, err}
		}
	}
	for _, dir := range dirs {
		set, err := rules.Load(append(append([]string(nil), extra...), dir)...)
		if err != nil {
			return &exitError{2, err}
		}
		first := len(all)
		cases := filepath.Join(dir, "cases")
		if st, err := os.Stat(cases); err == nil && st.IsDir() {
			res, err := rules.RunCases(set, cases)
			if err != nil {
				return &exitError{2, err}
			}
			all = append(all, res...)
		}
		res, err := rules.RunRegoTests(ctx, set, dir)
		if err != nil {
			return &exitError{2, err}
		}
		all = append(all, res...)
		untested = append(untested, untestedRules(set, base, all[first:])...)
	}
	// Case files not read (named pipes) are named first and not counted.
	all = slices.DeleteFunc(all, func(r rules.CaseResult) bool {
		if r.Rule == "" && r.Got == "skipped" {
			fmt.Fprintf(stdout, "SKIP: %s: not read: %s\n", r.File, r.Detail)
			return true
		}
		return false
	})
	if len(all) == 0 {
		return &exitError{2, fmt.Errorf("run rule tests: no cases (DIR/cases/*.yaml) or Rego tests (DIR/*_test.rego) in %s", strings.Join(dirs, ", "))}
	}
	failed := 0
	for _, r := range all {
		status := "PASS"
		switch {
		case !r.Pass:
			status = "FAIL"
			failed++
		case r.Got == "skipped": // a script case in a build without the Python parser
			status = "SKIP"
		}
		fmt.Fprintf(stdout, "%s: %s:%d: %s: %s\n", status, r.File, r.Line, r.Rule, r.Name)
		if !r.Pass {
			fmt.Fprintf(stdout, "    got %s: %s\n", r.Got, r.Detail)
		}
	}
	for _, u := range untested {
		fmt.Fprintf(stdout, "WARN: %s\n", u)
	}
	fmt.Fprintln(stdout, strings.Repeat("-", 80))
	if failed > 0 {
		fmt.Fprintf(stdout, "PASS: %d/%d\nFAIL: %d/%d\n", len(all)-failed, len(all), failed, len(all))
		return &exitError{1, fmt.Errorf("run rule tests: %d of %d failed", failed, len(all))}
	}
	fmt.Fprintf(stdout, "PASS: %d/%d\n", len(all), len(all))
	return nil
}

// untestedRules lists the rules a directory adds to base (the built-in
// pack and the --rules directories) that its results leave untested: no case
// and no Rego test of the rule's package, or cases that never fire or are
// never quiet (every rule ships one of each).
func untestedRules(set, base *rules.Set, res []rules.CaseResult) []string {
	seen := map[string]map[string]bool{}
	for _, r := range res {
		if seen[r.Rule] == nil {
			seen[r.Rule] = map[string]bool{}
		}
		seen[r.Rule][r.Got] = true
	}
	var out []string
	for _, r := range set.Rules() {
		if _, ok := base.Rule(r.ID); ok {
			continue
		}
		pkg := "stepdoctor.rules." + strings.ReplaceAll(r.ID, "-", "_")
		got, rego := seen[r.ID], false
		for k := range seen {
			rego = rego || k == pkg || strings.HasPrefix(k, pkg+"_test") || strings.HasPrefix(k, pkg+".")
		}
		switch {
		case got == nil && !rego:
			out = append(out, fmt.Sprintf("%s (%s) has no case and no Rego test", r.ID, r.Source))
		case got != nil && !got[rules.ExpectFires]:
			out = append(out, fmt.Sprintf("%s (%s) has no case that fires", r.ID, r.Source))
		case got != nil && !got[rules.ExpectQuiet]:
			out = append(out, fmt.Sprintf("%s (%s) has no case that stays quiet", r.ID, r.Source))
		}
	}
	return out
}

// writeCatalogue writes the Markdown catalogue of rules (docs/RULES.md):
// a table, then each rule's documentation. Output depends only on the
// rules, so the file is reproducible.
func writeCatalogue(w io.Writer, rs []rules.Rule) {
	fmt.Fprint(w, `# Rules

Generated from the rule metadata by `+"`stepdoctor rules doc`"+` (checked by `+"`go test ./cmd/stepdoctor`"+`;
regenerate with `+"`go test ./cmd/stepdoctor -run TestRulesDoc -update`"+`). Do not edit by hand.

**Impact** is the estimated recoverable share of the analysis window (step time, or the whole
trace without `+"`ProfilerStep`"+` spans), 0..1. Findings rank by impact x confidence weight
(confirmed 1.0, likely 0.6), then severity, then rule id.

**Impacts partition time.** The GPU idle time is split by what the launching thread was doing
(the idle-gap causes, which sum to `+"`gpu_idle_ratio`"+`), and each cause is claimed by exactly one
rule: DataLoader by dataloader-bound or else idle-gap-dataloader; syncs by host-sync-in-step or
else idle-gap-sync; runtime calls and CPU operators by launch-bound or else idle-gap-launch, less
what repeated-small-op claims; the optimizer by optimizer-foreach, less what optimizer-zero-grad
claims; nothing recorded by gpu-underutilized. Busy-time rules (pageable-memcpy, then
frequent-memcpy for the remaining copy time; elementwise-fusion; amp-not-used;
exposed-communication) never overlap the idle causes. No built-in rule hides another
(no `+"`suppressed_by`"+`): the "or else" conditions compare facts, so a rule that measured
nothing cannot hide one that did.

**Severity** listed below is the most a finding of the rule gets. Rules with a time impact band
it: high from 20%, medium from 2%, low below, never above the rule's severity. Rules about risk or
measurement (memory-near-capacity, memory-growth, gpu-activity-missing, profile-too-short,
profiler-overhead-trace, memory-headroom) keep their severity with impact 0. `+"`.stepdoctor.yaml`"+`
can pin a severity, change params or disable a rule.

`)
	var trace, script []rules.Rule
	for _, r := range rs {
		if r.Category == rules.CategoryScript {
			script = append(script, r)
		} else {
			trace = append(trace, r)
		}
	}
	for _, group := range []struct {
		title string
		rs    []rules.Rule
	}{{"Trace rules", trace}, {"Script rules (stepdoctor lint)", script}} {
		if len(group.rs) == 0 {
			continue
		}
		fmt.Fprintf(w, "## %s\n\n| id | severity | category | title | requires |\n|---|---|---|---|---|\n", group.title)
		for _, r := range group.rs {
			fmt.Fprintf(w, "| [`%s`](#%s) | %s | %s | %s | %s |\n", r.ID, r.ID, reports.MarkdownText(string(r.Severity)),
				reports.MarkdownText(string(r.Category)), reports.MarkdownText(r.Title), mdCodes(r.Requires))
		}
		fmt.Fprintln(w)
	}
	for _, r := range rs {
		writeRuleDoc(w, r, "###")
	}
}

// writeRuleDoc writes one rule's documentation with a heading of the given
// level. Team rules are untrusted: every string goes through the reports'
// Markdown escapers (the rule id is already a plain identifier).
func writeRuleDoc(w io.Writer, r rules.Rule, heading string) {
	fmt.Fprintf(w, "%s %s\n\n**%s** · severity %s · %s · %s rule", heading, r.ID, reports.MarkdownText(r.Title),
		reports.MarkdownText(string(r.Severity)), reports.MarkdownText(string(r.Category)), reports.MarkdownText(string(r.Kind)))
	if r.Source != "" {
		// the source file without the line number: stable across edits
		src, _, _ := strings.Cut(r.Source, ":")
		fmt.Fprintf(w, " (%s)", reports.MarkdownCode(src))
	}
	fmt.Fprintf(w, "\n\nRequires: %s", mdCodes(r.Requires))
	if len(r.Params) > 0 {
		keys := make([]string, 0, len(r.Params))
		for k := range r.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ps []string
		for _, k := range keys {
			ps = append(ps, fmt.Sprintf("%s = %s", reports.MarkdownCode(k), reports.MarkdownText(fmt.Sprint(r.Params[k]))))
		}
		fmt.Fprintf(w, "  \nParams: %s", strings.Join(ps, ", "))
	}
	fmt.Fprintf(w, "\n\n%s\n", strings.TrimSpace(reports.MarkdownDoc(r.Doc)))
	fmt.Fprintln(w, "\nReferences:")
	for _, ref := range r.References {
		fmt.Fprintf(w, "- %s\n", reports.MarkdownRef(ref))
	}
	fmt.Fprintln(w)
}

// mdCodes lists identifiers as code spans, comma-separated.
func mdCodes(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = reports.MarkdownCode(id)
	}
	return strings.Join(out, ", ")
}
