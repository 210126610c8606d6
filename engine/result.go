package engine

import (
	"fmt"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/rules"
)

// ResultSchemaVersion versions the JSON report shape (Result).
const ResultSchemaVersion = 1

// Result is the outcome of one analysis: one TraceResult per input trace
// (one per rank or worker file), ranked findings inside each. It is the view
// model every renderer in package reports reads; it holds no wall-clock data
// so output is deterministic.
type Result struct {
	SchemaVersion int            `json:"schema_version"`
	Traces        []*TraceResult `json:"traces"`
	// Skipped lists files found in a directory that are not Kineto traces
	// (an Execution Trace, a config file), with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Notes are remarks about the analysis as a whole (for example why
	// several traces were not compared as ranks of one job).
	Notes []string `json:"notes,omitempty"`
	// RuleErrors lists the rules that failed or timed out on a trace, in
	// trace order: those traces lack the rules' findings. They are part of
	// the result, not of any trace's health (the trace is fine; a rule is
	// not).
	RuleErrors []RuleError `json:"rule_errors,omitempty"`
	// About says what made the report (set by the CLI; nil in tests).
	About *About `json:"-"`
	// Baseline is the comparison with analyze --baseline OLD, set before
	// the report is written; nil without --baseline.
	Baseline *Baseline `json:"baseline,omitempty"`
}

// RuleError is one rule that failed (a runtime error, a timeout, a
// malformed finding) on one trace.
type RuleError struct {
	Trace   string `json:"trace"`  // the trace's input path
	Rule    string `json:"rule"`   // rule id; "" when no single rule failed
	Source  string `json:"source"` // file:line the rule was loaded from
	Message string `json:"message"`
}

// ruleLine is the failure without its trace: "evaluate rule ID (SOURCE):
// why", or the message when no single rule failed.
func (e RuleError) ruleLine() string {
	if e.Rule == "" {
		return e.Message
	}
	return fmt.Sprintf("evaluate rule %s (%s): %s", e.Rule, e.Source, e.Message)
}

// String is the one-line form stderr shows:
// "PATH: evaluate rule ID (SOURCE): why".
func (e RuleError) String() string {
	if e.Rule == "" {
		return e.Trace + ": " + e.Message
	}
	return fmt.Sprintf("%s: evaluate rule %s (%s): %s", e.Trace, e.Rule, e.Source, e.Message)
}

// Skipped is a file left out of the analysis.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Input describes one trace file as read.
type Input struct {
	Path       string `json:"path"`       // as given on the command line (or "-" for stdin)
	Bytes      int64  `json:"bytes"`      // uncompressed JSON bytes read
	Compressed bool   `json:"compressed"` // gzip
}

// TraceResult holds everything derived from one trace file.
type TraceResult struct {
	Input Input `json:"input"`
	// Rank identifies the trace among several ranks; RankSource says where
	// it came from (distributedInfo, file name, input order).
	Rank         *int64               `json:"rank"`
	RankSource   string               `json:"rank_source"`
	Facts        *facts.Facts         `json:"facts"`
	Findings     []rules.Finding      `json:"findings"`      // ranked, most important first
	NotEvaluated []rules.NotEvaluated `json:"not_evaluated"` // rules whose required facts are null
	Health       trace.Health         `json:"health"`
}

// Baseline is the comparison of a run with a baseline run (analyze
// --baseline): per trace pair the step-time comparison and the
// regressions beyond the bound.
type Baseline struct {
	Path          string         `json:"path"`           // the baseline, as given
	MaxRegression float64        `json:"max_regression"` // the bound, relative (0.1 = 10%)
	Pairs         []BaselinePair `json:"pairs"`
	// Unpaired are the traces of either side without a trace of the same
	// rank on the other ("baseline: PATH", "this run: PATH"): not gated.
	Unpaired []string `json:"unpaired"`
}

// Bound is MaxRegression as the reports and the exit message give it:
// "10%", "12.5%".
func (b *Baseline) Bound() string {
	return strconv.FormatFloat(100*b.MaxRegression, 'g', 4, 64) + "%"
}

// BaselinePair is one trace compared with its baseline trace.
type BaselinePair struct {
	Baseline string   `json:"baseline"` // the baseline's trace
	Trace    string   `json:"trace"`    // this run's trace
	Rank     *int64   `json:"rank"`     // the rank both are, when ranks paired them
	Warnings []string `json:"warnings"` // why the two may not be comparable (PairDiff.Warnings)
	// Steps compares the step times (PairDiff.Steps); Noise is the
	// relative change below which a difference is noise.
	Steps *StepComparison `json:"step_time"`
	Noise float64         `json:"noise"`
	// SpeedUp is median step time baseline / this run (> 1 is faster), per
	// sample when the batch sizes differ; nil without steps on a side.
	SpeedUp *float64 `json:"speed_up"`
	// Regressions are the gated facts that got worse beyond the bound and
	// the noise: "step_time_us.p50 regressed 175.1%".
	Regressions []string `json:"regressions"`
}
