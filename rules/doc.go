// Package rules loads and evaluates the declarative rules that turn facts
// (engine/facts) into ranked findings: OPA Rego (v1 syntax) modules and
// expr rules in YAML. The shipped pack lives in rules/builtin (embedded);
// teams add directories of their own rules.
//
// # API
//
//	s, err := rules.Builtin()                 // the embedded pack
//	s, err := rules.Load("team-rules")       // built-in pack + team dirs
//	s, err = s.With(rules.Config{...})       // .stepdoctor.yaml: disable, severities, params, timeout
//	findings, notEvaluated, err := s.Evaluate(ctx, facts)  // findings ranked
//	results, err := rules.RunCases(s, "team-rules/cases")  // rule tests
//
// A rule is a documented value (Rule): id, title, severity, category,
// requires, doc, references, plus optional examples (a Facts.Examples key
// whose first MaxExamples events are copied into each finding),
// suppressed_by (rule ids whose findings make this rule's findings
// redundant) and params (thresholds with defaults). Loading validates every
// field; errors name the file, line and rule id. Requires names facts by
// their json names (FactNames); a rule whose required fact is null, or
// whose required has_* capability flag is false, is not evaluated, and
// Evaluate returns a NotEvaluated with the profiler option that would make
// it evaluable (HintCUDA, HintSteps, HintShapes, HintMemory, ...).
//
// Thresholds live in params: Rego rules read
// data.stepdoctor.params["<rule-id>"].<name>, expr rules params.<name>;
// Config.Params overrides them (same kind of value only). Rego queries and
// expr programs are compiled once per Set (Load, With).
//
// # Sandbox
//
// Team rules are untrusted. Rego compiles against SandboxCapabilities (no
// http.send, net.*, time.now_ns, rand.*, uuid.rfc4122, opa.runtime, trace
// or any other non-deterministic built-in), so a rule calling one fails to
// load. expr rules get no now(). Every rule evaluation runs under a
// deadline (Config.Timeout, default DefaultTimeout = 2 s); a rule that
// times out or fails is reported in Evaluate's error while the other rules'
// findings are still returned.
//
// # Ranking
//
// Rank orders findings by Score = impact x confidence weight (confirmed
// 1.0, likely 0.6: a guess needs about 1.7x the impact of a measurement to
// outrank it), then severity (high, medium, low, info), then rule id, then
// message. impact is the estimated recoverable share of step time (0..1).
//
// # Built-in rules
//
// docs/RULES.md is the catalogue, generated from the rule metadata
// (`stepdoctor rules doc`; a test fails when it is stale). Units: _ratio is
// a share of the analysis window W (0..1), _per_ms per millisecond of W,
// _per_step per profiled step, _count a count.
//
// Impacts partition time. The idle-gap causes split gpu_idle_ratio by what
// the launching thread was doing, and each cause is claimed by one rule:
// DataLoader by dataloader-bound, else idle-gap-dataloader; syncs by
// host-sync-in-step, else idle-gap-sync; runtime calls and CPU operators by
// launch-bound (the tiny-kernel pattern), else idle-gap-launch, both less
// repeated-small-op's claim; the optimizer by optimizer-foreach, less
// optimizer-zero-grad's claim; nothing recorded by gpu-underutilized.
// Busy-time rules (pageable-memcpy, frequent-memcpy for the copy time left,
// elementwise-fusion, amp-not-used, exposed-communication) do not overlap
// them. The "else" is a condition on facts exposed by the owning rule's
// package (claims, claim), not suppressed_by: a rule that measured nothing
// cannot hide one that did. Built-in rules use no suppressed_by.
//
// Severity follows impact: data.stepdoctor.lib.severity(impact, cap) is
// high from 20%, medium from 2%, low below, never above cap (the rule's
// METADATA severity). Risk and measurement rules (memory-near-capacity,
// memory-growth, gpu-activity-missing, profile-too-short,
// profiler-overhead-trace, memory-headroom) have impact 0 and keep their
// severity. Messages say "of step time" with ProfilerStep spans and "of the
// profiled window" without (lib.of_time).
//
// # Team configuration and tests
//
// .stepdoctor.yaml (FileConfig; LoadConfigFile, FindConfig,
// LoadConfigured) disables rules, pins severities, overrides params, adds
// rule directories and sets the timeout. RunCases runs YAML cases and
// RunRegoTests a directory's *_test.rego rules like `opa test`;
// `stepdoctor rules test [DIR...]` runs both. rules/examples is an example
// team directory.
package rules
