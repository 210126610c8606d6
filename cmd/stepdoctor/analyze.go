package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/reports"
	"github.com/stepdoctor/stepdoctor/rules"
	"golang.org/x/term"
)

type analyzeFlags struct {
	baseline         string
	maxRegression    string
	regressionFact   []string
	maxRegressionSet bool
	out              string
	annotate         string
	format           string
	failOn           string
	ruleDirs         []string
	script           string
	config           string
	stepMarker       string
	read             readFlags
	failOnRuleError  bool
}

func analyzeCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var fl analyzeFlags
	c := &cobra.Command{
		Use:   "analyze PATH...",
		Short: "Analyze traces (files, tensorboard_trace_handler directories, - for stdin) and rank fixes",
		Long: `analyze reads torch.profiler traces (Kineto Chrome-trace JSON, .json or .json.gz),
derives facts (GPU idle ratio, launch density, memcpy, host syncs, DataLoader share, ...),
evaluates the rules and prints ranked recommendations. With -o FILE it writes a report
whose format follows the extension (` + reports.ExtensionNames(reports.ForAnalyze) + `); --format overrides it.
SARIF (for code scanning) places a finding at its script line when --script joined it
or a with_stack trace named the Python function, else at the trace file.

With --baseline OLD the median step time (of the capped steps, per sample when the batch
sizes differ) is compared with OLD's beyond the noise band of both runs, and so is each
--regression-fact (a leaf that diff prints, such as step_time_us.p90 or gpu_idle_ratio).

Exit codes: 0 done; 1 a finding at or above --fail-on; 2 usage or input error;
3 a regression over --max-regression against --baseline.

With --annotate OUT.json (or OUT.json.gz) it also writes the trace with each finding
added on the tracks of its example events (instant events, flows from a "stepdoctor"
process with one thread per finding), to open in ui.perfetto.dev or chrome://tracing.
It takes exactly one trace file.`,
		Args: needArgs([]string{"PATH"}, -1, "a trace file .json or .json.gz, a tensorboard_trace_handler directory, a facts file .jsonl, or - for stdin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.maxRegressionSet = cmd.Flags().Changed("max-regression")
			return analyze(cmd.Context(), args, fl, stdin, stdout, stderr)
		},
	}
	c.Flags().StringVarP(&fl.out, "output", "o", "", "write the report to `FILE` (format from the extension: "+reports.ExtensionNames(reports.ForAnalyze)+")")
	c.Flags().StringVar(&fl.annotate, "annotate", "", "also write the trace with the findings added (instant events and flows on their example events) to `OUT.json` or OUT.json.gz, to open in ui.perfetto.dev; one trace file only")
	c.Flags().StringVar(&fl.format, "format", "", "report format: "+reports.FormatNames(reports.ForAnalyze)+" (overrides the -o extension)")
	c.Flags().StringVar(&fl.baseline, "baseline", "", "compare with the traces or facts file at `OLD`; exit 3 when the median step time or a --regression-fact regressed beyond --max-regression")
	c.Flags().StringVar(&fl.maxRegression, "max-regression", "10%", "with --baseline: the largest allowed slowdown of the median step time (and of each --regression-fact), e.g. 10% or 0.1; changes within both runs' noise band are not regressions")
	c.Flags().StringArrayVar(&fl.regressionFact, "regression-fact", nil, "with --baseline: also gate on this fact leaf getting worse (repeatable), e.g. gpu_idle_ratio or step_time_us.p90; facts without a direction are refused")
	c.Flags().StringVar(&fl.failOn, "fail-on", "", "exit 1 when a finding has this severity or higher: high, medium, low or info")
	addRulesFlag(c, &fl.ruleDirs)
	c.Flags().BoolVar(&fl.failOnRuleError, "fail-on-rule-error", false, ruleErrorHelp)
	addConfigFlag(c, &fl.config)
	addStepMarkerFlag(c, &fl.stepMarker)
	addReadFlags(c, &fl.read)
	c.Flags().StringVar(&fl.script, "script", "", "join the findings of the training script `FILE` (confirmed where the trace measures them)")
	return c
}

func analyze(ctx context.Context, paths []string, fl analyzeFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	usage := func(err error) error { return &exitError{2, err} }
	if fl.baseline == "" && (fl.maxRegressionSet || len(fl.regressionFact) > 0) {
		return usage(fmt.Errorf("parse flags: --max-regression and --regression-fact need --baseline OLD"))
	}
	if fl.baseline != "" {
		if _, err := parseBound(fl.maxRegression); err != nil {
			return usage(err)
		}
		if err := checkRegressionFacts(fl.regressionFact); err != nil {
			return usage(err)
		}
		if fl.baseline == "-" && slices.Contains(paths, "-") {
			return usage(fmt.Errorf("parse paths: - (stdin) given for both the trace and --baseline; it can be read once"))
		}
	}
	if fl.out == "-" {
		fl.out = "" // standard output, as for facts
	}
	format, err := chooseFormat(reports.ForAnalyze, fl.format, objstore.Name(fl.out))
	if err != nil {
		return usage(err)
	}
	render := format.Analyze
	failBar, err := severityRank(fl.failOn)
	if err != nil {
		return usage(err)
	}
	cfg, err := loadConfig(fl.config)
	if err != nil {
		return usage(err)
	}
	// The rules compile beside the reading of the traces
	// (engine.Options.LoadRules); the set is kept for the script and the
	// baseline.
	compiled := sync.OnceValues(func() (*rules.Set, error) { return cfg.rules(fl.ruleDirs) })
	if err := checkOutput(fl.out, analyzeInputs(paths, fl, cfg.file)); err != nil {
		return err
	}
	if err := checkAnnotate(fl, paths, cfg.file); err != nil {
		return err
	}
	fcfg, err := cfg.factsWith(fl.stepMarker)
	if err != nil {
		return usage(err)
	}
	opts := engine.Options{Paths: paths, LoadRules: compiled, Facts: fcfg, Stdin: stdin}
	done := fl.read.watch(&opts, stderr)
	res, err := engine.Analyze(ctx, opts)
	done()
	if err != nil {
		var ie *engine.InputError
		if errors.As(err, &ie) {
			return usage(err)
		}
		return &exitError{2, err}
	}
	if err := checkAnnotateRead(fl, res); err != nil {
		return err
	}
	set, _ := compiled() // Analyze succeeded: so did the compile
	listSkippedRules(stderr, set)
	for _, line := range reports.RuleErrorLines(res) {
		fmt.Fprintf(stderr, "warning: %s\n", reports.TerminalText(line))
	}
	warnStepMarker(stderr, fl.stepMarker, res)
	if fl.out != "" { // the terminal summary lists them itself
		for _, sk := range res.Skipped {
			fl.read.say(stderr, "skipped %s: %s\n", reports.TerminalText(sk.Path), reports.TerminalText(sk.Reason))
		}
	}
	res.About = about(ctx, cfg, fl.ruleDirs)
	res.About.Annotated = fl.annotate
	if fl.script != "" {
		sr, err := engine.LintFile(ctx, fl.script, set)
		if err != nil {
			return &exitError{2, err}
		}
		for _, e := range sr.RuleErrors {
			fmt.Fprintf(stderr, "warning: %s\n", reports.TerminalText(fl.script+": "+e))
			res.RuleErrors = append(res.RuleErrors, engine.RuleError{Trace: fl.script, Message: e})
		}
		if err := engine.JoinScript(res, sr, set); err != nil {
			return &exitError{2, err}
		}
	}
	// The baseline is read and compared before the report is written: a
	// baseline that cannot be read or compared leaves no report; a
	// regression is the exit code once the report is out.
	var regression error
	if fl.baseline != "" {
		err := checkBaseline(ctx, fl, engine.Options{Paths: []string{fl.baseline}, Rules: set, Facts: fcfg, Stdin: stdin}, res, stderr)
		if ee, ok := err.(*exitError); ok && ee.code == exitRegression {
			regression = err
		} else if err != nil {
			return err
		}
	}
	// Colours and cut messages only on a terminal; a file or a pipe gets
	// every message whole.
	tty := fl.out == "" && isTerminal(stdout)
	look := reports.Terminal{Color: tty && os.Getenv("NO_COLOR") == "", Cut: tty}
	write := func(w io.Writer) error { return render(w, res, look) }
	// The annotated trace is written first: when it cannot be (a missing
	// folder, a trace cut before its traceEvents array closes), no report
	// is left behind that names it.
	if fl.annotate != "" {
		if err := reports.AnnotateResult(fl.annotate, res); err != nil {
			return &exitError{2, fmt.Errorf("write annotated trace: %w", err)}
		}
		fl.read.say(stderr, "wrote %s\n", fl.annotate)
	}
	if fl.out != "" {
		if err := writeOutput(ctx, fl.out, write); err != nil {
			return &exitError{2, fmt.Errorf("write report: %w", err)}
		}
		fl.read.say(stderr, "wrote %s\n", fl.out)
	} else if err := write(stdout); err != nil {
		return &exitError{2, fmt.Errorf("write report: %w", err)}
	}
	if regression != nil {
		return regression
	}
	if failBar > 0 {
		for _, tr := range res.Traces {
			for _, f := range tr.Findings {
				if sev, _ := severityRank(string(f.Severity)); sev >= failBar {
					return &exitError{1, fmt.Errorf("%s: finding %s (%s) is at or above --fail-on %s", tr.Input.Path, f.Rule, f.Severity, fl.failOn)}
				}
			}
		}
	}
	return ruleFailure(fl.failOnRuleError || cfg.failOnRuleError(), reports.RuleErrorLines(res))
}

// checkAnnotate refuses an --annotate path that is not a trace name
// (.json, .json.gz), that is the report's, or that is one of the inputs;
// and stdin, which cannot be read a second time to be copied.
func checkAnnotate(fl analyzeFlags, paths []string, cfg *rules.FileConfig) error {
	if fl.annotate == "" {
		return nil
	}
	usage := func(format string, a ...any) error { return &exitError{2, fmt.Errorf(format, a...)} }
	if objstore.IsURL(fl.annotate) {
		return usage("refuse --annotate %s: the annotated trace goes to a local path (for file:///dir/x.json give /dir/x.json)", fl.annotate)
	}
	if !engine.IsTraceName(filepath.Base(fl.annotate)) {
		return usage("refuse --annotate %s: the annotated trace is Chrome-trace JSON; name it .json or .json.gz", fl.annotate)
	}
	if fl.annotate == "-" || fl.annotate == fl.out {
		return usage("refuse --annotate %s: it is the report's output", fl.annotate)
	}
	for _, p := range paths {
		if p == "-" {
			return usage("refuse --annotate with stdin: give the trace file, which is read a second time to be copied")
		}
	}
	if fl.out != "" {
		if st, err := os.Stat(fl.out); err == nil {
			if ast, err := os.Stat(fl.annotate); err == nil && os.SameFile(st, ast) {
				return usage("refuse --annotate %s: it is the report's output %s", fl.annotate, fl.out)
			}
		}
	}
	if err := checkOutput(fl.annotate, analyzeInputs(paths, fl, cfg)); err != nil {
		return err
	}
	// Several trace files named on the command line are refused before
	// reading any. A directory may hold other .json files (a config, a
	// results file) that the read skips, so its traces are counted once
	// read (checkAnnotateRead).
	named := 0
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			named++
		}
	}
	if named > 1 {
		return usage("refuse --annotate %s: it writes one trace and %d were given; run analyze once per trace", fl.annotate, named)
	}
	return nil
}

// checkAnnotateRead refuses --annotate, before any report is written, when
// the read found more than one trace (a directory of ranks).
func checkAnnotateRead(fl analyzeFlags, res *engine.Result) error {
	if fl.annotate == "" {
		return nil
	}
	if len(res.Traces) > 1 {
		return &exitError{2, fmt.Errorf("refuse --annotate %s: it writes one trace and %d were read; run analyze once per trace", fl.annotate, len(res.Traces))}
	}
	// The annotated copy keeps the input's bytes: a trace the reader had
	// to repair would be copied with its damage, which trace viewers
	// reject.
	if len(res.Traces) == 1 && res.Traces[0] != nil && res.Traces[0].Health.Repaired {
		return &exitError{2, fmt.Errorf("refuse --annotate %s: %s was repaired to be read (see its health in the report), and the annotated copy would keep the damage; fix or re-export the trace", fl.annotate, res.Traces[0].Input.Path)}
	}
	return nil
}

// listSkippedRules lists the entries of rule directories that were not
// read (named pipes and other files that are not regular).
func listSkippedRules(w io.Writer, set *rules.Set) {
	for _, sk := range set.Skipped() {
		fmt.Fprintf(w, "skipped rule file %s\n", sk)
	}
}

// analyzeInputs lists everything analyze reads, for checkOutput.
func analyzeInputs(paths []string, fl analyzeFlags, cfg *rules.FileConfig) []input {
	in := traceInputs(paths...)
	if fl.baseline != "" {
		in = append(in, traceInputs(fl.baseline)...)
	}
	if fl.script != "" {
		in = append(in, input{kind: "script", path: fl.script})
	}
	dirs := fl.ruleDirs
	if cfg != nil {
		in = append(in, input{kind: "config", path: cfg.Path})
		dirs = append(append([]string(nil), cfg.Rules...), dirs...)
	}
	return append(in, ruleDirInputs(dirs...)...)
}

// chooseFormat picks a subcommand's format from --format, else from the
// -o extension, else its default (the first it offers).
func chooseFormat(cmd, name, out string) (reports.Format, error) {
	switch {
	case name != "":
		return reports.LookupFormat(cmd, name)
	case out != "":
		return reports.FormatFor(cmd, out)
	}
	return reports.FormatsOf(cmd)[0], nil
}

// severityRank orders severities; "" (no bar) is 0.
func severityRank(s string) (int, error) {
	switch s {
	case "":
		return 0, nil
	case "info":
		return 1, nil
	case "low":
		return 2, nil
	case "medium":
		return 3, nil
	case "high":
		return 4, nil
	}
	return 0, fmt.Errorf("parse --fail-on: unknown severity %q (want high, medium, low or info)", s)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readFlags are -q and -v of the commands that read traces.
type readFlags struct{ quiet, verbose bool }

func addReadFlags(c *cobra.Command, rf *readFlags) {
	c.Flags().BoolVarP(&rf.quiet, "quiet", "q", false, "print only errors and warnings on stderr: no progress, no \"wrote FILE\"")
	c.Flags().BoolVarP(&rf.verbose, "verbose", "v", false, "print each input's read and facts time on stderr (and progress from the start on a terminal)")
	c.MarkFlagsMutuallyExclusive("quiet", "verbose")
}

// progressDelay is how long a read runs before the terminal progress line
// appears: short reads stay silent.
const progressDelay = 2 * time.Second

// watch wires the progress line and -v timings into opts; call the
// returned done when the read is over (it clears the line).
func (rf readFlags) watch(opts *engine.Options, stderr io.Writer) (done func()) {
	if rf.quiet {
		return func() {}
	}
	bar := &progressBar{w: stderr, start: time.Now(), tty: isTerminal(stderr), delay: progressDelay}
	if rf.verbose {
		bar.delay = 0
	}
	if bar.tty {
		opts.Progress = bar.update
	}
	if rf.verbose {
		opts.Loaded = bar.loaded
	}
	return bar.done
}

// say prints an informational line on stderr unless -q.
func (rf readFlags) say(w io.Writer, format string, a ...any) {
	if !rf.quiet {
		fmt.Fprintf(w, format, a...)
	}
}

// progressBar draws "reading traces: 45% (120/260 MB, 85 MB/s)" on a
// terminal's stderr once a read has taken longer than delay, at most ten
// times a second, and clears it at the end. With -v it also prints one line
// per input with its timings (clearing the progress line first).
type progressBar struct {
	w     io.Writer
	start time.Time
	delay time.Duration
	tty   bool
	mu    sync.Mutex
	shown bool
	last  time.Time
}

func (p *progressBar) update(read, total int64) {
	now := time.Now()
	if now.Sub(p.start) < p.delay || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < 100*time.Millisecond && read < total {
		return
	}
	p.last = now
	p.shown = true
	rate := float64(read) / (1 << 20) / max(now.Sub(p.start).Seconds(), 1e-3)
	fmt.Fprintf(p.w, "\r\033[Kreading traces: %3.0f%% (%d/%d MB, %.0f MB/s)", 100*float64(min(read, total))/float64(total), read>>20, total>>20, rate)
}

func (p *progressBar) loaded(ft engine.FileTiming) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
	line := fmt.Sprintf("read %s: read %s", ft.Path, ft.Read.Round(time.Millisecond))
	if ft.Bytes > 0 {
		line += fmt.Sprintf(" (%.1f MB, %.0f MB/s), facts %s", float64(ft.Bytes)/1e6, float64(ft.Bytes)/1e6/max(ft.Read.Seconds(), 1e-3), ft.Derive.Round(time.Millisecond))
	}
	fmt.Fprintln(p.w, line)
}

func (p *progressBar) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// exitRegression is the exit code of a regression against --baseline,
// distinct from 1 (a finding at or above --fail-on) so CI can tell them
// apart.
const exitRegression = 3

// checkBaseline compares the analysis with --baseline and fails (exit 3)
// when the median step time or a --regression-fact got worse than the
// bound.
func checkBaseline(ctx context.Context, fl analyzeFlags, baseOpts engine.Options, res *engine.Result, stderr io.Writer) error {
	bound, err := parseBound(fl.maxRegression)
	if err != nil {
		return &exitError{2, err}
	}
	base, err := engine.Analyze(ctx, baseOpts)
	if err != nil {
		return &exitError{2, fmt.Errorf("read baseline: %w", err)}
	}
	d, regs, comparison := engine.CompareBaseline(base, res, fl.baseline, fl.regressionFact, bound)
	if len(d.Pairs) == 0 {
		return &exitError{2, fmt.Errorf("compare with baseline %s: no trace pairs up (%s)", fl.baseline, strings.Join(d.Unpaired, "; "))}
	}
	for _, tr := range base.Traces {
		if tr.Health.Repaired {
			fmt.Fprintf(stderr, "warning: the baseline %s was repaired (%s): its figures may be partial\n", reports.TerminalText(tr.Input.Path), reports.TerminalText(repairs(tr.Health)))
		}
	}
	if len(base.Traces) != len(res.Traces) {
		fmt.Fprintf(stderr, "warning: the baseline has %d traces and this run %d; only traces with the same rank are compared\n", len(base.Traces), len(res.Traces))
	}
	stepped := map[string]bool{}
	for _, tr := range slices.Concat(base.Traces, res.Traces) {
		stepped[tr.Input.Path] = tr.Facts != nil && tr.Facts.HasSteps
	}
	for _, p := range d.Pairs {
		if p.SpeedUp == nil {
			var without []string
			for _, path := range []string{p.Before.Path, p.After.Path} {
				if !stepped[path] {
					without = append(without, path)
				}
			}
			if len(without) == 0 { // steps, but no positive median
				without = []string{p.Before.Path, p.After.Path}
			}
			return &exitError{2, fmt.Errorf("compare with baseline %s: no step time in %s (no ProfilerStep spans), so step time cannot be compared; profile both with a schedule and prof.step()", fl.baseline, strings.Join(without, " nor "))}
		}
	}
	res.Baseline = comparison
	if fl.out != "" { // the report on stdout has them
		for _, p := range d.Pairs {
			fl.read.say(stderr, "baseline %s: %s\n", p.Before.Path, baselineLine(p))
		}
	}
	if len(regs) > 0 {
		var parts []string
		for _, r := range regs[:min(len(regs), maxRegressionsShown)] {
			parts = append(parts, fmt.Sprintf("%s: %s", d.Pairs[r.Pair].After.Path, r))
		}
		if n := len(regs) - maxRegressionsShown; n > 0 {
			parts = append(parts, fmt.Sprintf("and %d more (the report lists them)", n))
		}
		return &exitError{exitRegression, fmt.Errorf("regression over %s against %s: %s", comparison.Bound(), fl.baseline, strings.Join(parts, "; "))}
	}
	return nil
}

// repairs lists the reasons of a trace's repairs, as "truncated, ...".
func repairs(h trace.Health) string {
	var why []string
	for _, d := range h.Diagnostics {
		if d.Kind == trace.DiagRepair {
			why = append(why, d.Reason)
		}
	}
	return strings.Join(why, ", ")
}

// maxRegressionsShown bounds the regressions the exit-3 message names.
const maxRegressionsShown = 5

// checkRegressionFacts refuses a --regression-fact that is not a fact
// leaf with a direction (one that can get worse).
func checkRegressionFacts(names []string) error {
	for _, n := range names {
		if def, ok := facts.LookupLeaf(n); !ok || def.Direction == facts.Neutral {
			return fmt.Errorf("parse --regression-fact: %q is not a fact that can regress; one of: %s", n, strings.Join(facts.RegressionLeaves(), ", "))
		}
	}
	return nil
}

func baselineLine(p engine.PairDiff) string {
	var b strings.Builder
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s; ", w)
	}
	b.WriteString(reports.StepVerdictLine(p))
	return b.String()
}

// warnStepMarker says, per trace, when --step-marker did not mark the
// steps: the trace has ProfilerStep#N spans (they take precedence), or no
// span matched.
func warnStepMarker(w io.Writer, marker string, res *engine.Result) {
	if marker == "" {
		return
	}
	for _, tr := range res.Traces {
		f := tr.Facts
		if f == nil {
			continue
		}
		switch {
		case f.StepMarker != nil && f.StepMarker.Source == "profiler_step" && marker != "auto":
			fmt.Fprintf(w, "warning: %s: --step-marker %s is not used: the trace has ProfilerStep#N spans\n", reports.TerminalText(tr.Input.Path), reports.TerminalText(marker))
		case f.StepMarker == nil:
			fmt.Fprintf(w, "warning: %s: --step-marker %s matched no span: the whole trace is one window\n", reports.TerminalText(tr.Input.Path), reports.TerminalText(marker))
		}
	}
}
