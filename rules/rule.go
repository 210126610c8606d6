package rules

import "github.com/stepdoctor/stepdoctor/engine/facts"

// Severity of a rule: high, medium, low or info.
type Severity string

const (
	SeverityHigh   Severity = "high"
	SeverityMedium Severity = "medium"
	SeverityLow    Severity = "low"
	SeverityInfo   Severity = "info"
)

// Confidence of a finding: confirmed when the numbers were measured directly
// in the trace, likely when inferred.
type Confidence string

const (
	Confirmed Confidence = "confirmed"
	Likely    Confidence = "likely"
)

// Rule is a documented value: everything a reader needs to trust and act on
// a finding, plus the evaluator that produces it.
type Rule struct {
	ID         string   `json:"id"` // stable kebab-case, never reused
	Title      string   `json:"title"`
	Severity   Severity `json:"severity"`
	Category   string   `json:"category"` // input-pipeline, host-overhead, memory-transfer, kernel-efficiency, memory, distributed, profiling-setup, script
	Requires   []string `json:"requires"` // fact names (json tags) that must be non-null; has_* flags must be true
	Doc        string   `json:"doc"`      // Markdown: why it matters, how to fix, the code change
	References []string `json:"references"`
	Source     string   `json:"source"` // file:line the rule was loaded from

	// Kind is the evaluator: "rego" or "expr".
	Kind string `json:"kind"`
	// Examples names the Facts.Examples key whose events (up to
	// MaxExamples) are copied into each finding; empty for none.
	Examples string `json:"examples,omitempty"`
	// SuppressedBy lists rule ids; when any of them produces a finding on
	// the same facts, this rule's findings are dropped (a more specific
	// rule already explains the symptom).
	SuppressedBy []string `json:"suppressed_by,omitempty"`
	// Params holds the rule's thresholds with their effective values
	// (defaults from the rule file, overridden by Config.Params).
	Params map[string]any `json:"params,omitempty"`
}

// Evidence is one named number behind a finding, with its unit
// ("ratio", "us", "count", "per_step", "per_ms", "bytes"). A rule's
// evidence item whose value is null (a fact the trace could not measure,
// such as a per-step count on a trace without steps) is left out rather
// than shown as 0.
type Evidence struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Finding is one rule firing on one trace.
type Finding struct {
	Rule       string           `json:"rule"`
	Title      string           `json:"title"`
	Severity   Severity         `json:"severity"`
	Category   string           `json:"category"`
	Message    string           `json:"message"` // carries the measured numbers
	Impact     float64          `json:"impact"`  // estimated recoverable share of step time, 0..1
	Confidence Confidence       `json:"confidence"`
	Evidence   []Evidence       `json:"evidence"`
	Examples   []facts.EventRef `json:"examples,omitempty"`
	Doc        string           `json:"doc"`
	References []string         `json:"references"`
	// Location is where in a source file the finding points (script
	// rules; joined script findings); nil for trace findings.
	Location *Location `json:"location,omitempty"`
	// Fix names the variant of the doc's code change that fits the trace
	// (a fenced block "```python variant=NAME"); "" for the default.
	Fix string `json:"fix,omitempty"`
	// SeverityPinned marks a severity a team configured: Rank keeps it.
	SeverityPinned bool `json:"-"`
}

// NotEvaluated records a rule skipped because a fact it requires is null,
// with the profiler option that would make it evaluable.
type NotEvaluated struct {
	Rule    string   `json:"rule"`
	Title   string   `json:"title"`
	Missing []string `json:"missing"`
	Hint    string   `json:"hint"` // e.g. "re-profile with record_shapes=True"
}
