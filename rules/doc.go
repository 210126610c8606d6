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
// Units: _ratio is a share of the analysis window W (0..1), _per_ms per
// millisecond of W, _per_step per profiled step, _count a count.
//
//   - dataloader-bound (Rego, input-pipeline, medium; high when
//     dataloader_single_process): dataloader_time_ratio > 0.05 (min_ratio;
//     the threshold of the PyTorch TensorBoard profiler plugin's
//     torch-tb-profiler DataLoader recommendation). impact =
//     dataloader_time_ratio, confirmed.
//   - pageable-memcpy (expr, memory-transfer, medium): memcpy_pageable_count
//     >= 1 (min_pageable) and memcpy_htod_count > 0. impact =
//     memcpy_time_ratio x min(1, memcpy_pageable_count / memcpy_count),
//     confirmed.
//   - host-sync-in-step (Rego, host-overhead, medium): has_gpu and
//     sync_per_step >= 1 (min_per_step: a drain of the GPU queue every
//     step). impact = min(0.02 x sync_per_step, 0.25, gpu_idle_ratio)
//     (impact_per_sync, max_impact; a stepdoctor estimate, since the trace
//     gives counts, not stall times), likely.
//   - launch-bound (Rego, host-overhead, high): short_kernel_ratio >= 0.5,
//     kernel_launches_per_ms >= 20 (one kernel per 50 us or faster, beyond
//     what a Python launch loop at ~5-20 us per op sustains with the GPU
//     fed) and gpu_idle_ratio >= 0.2. impact = gpu_idle_ratio x
//     short_kernel_ratio; confirmed when launch_bound_kernel_ratio >= 0.5,
//     else likely. Thresholds are stepdoctor defaults.
//   - gpu-underutilized (Rego, kernel-efficiency, medium): gpu_idle_ratio >
//     0.5 (torch-tb-profiler's "low utilization" threshold), suppressed by
//     dataloader-bound, launch-bound and host-sync-in-step. impact = 0.5 x
//     gpu_idle_ratio (recoverable_share), likely.
//   - profile-too-short (expr, profiling-setup, low): steps_count < 3
//     (min_steps; matches schedule(wait=1, warmup=1, active=3)). impact 0.
//
// Each rule's doc (Markdown) explains why it matters, how to confirm it in
// the trace, the code change, and how its impact is estimated; cases in
// rules/builtin/cases prove each fires and stays quiet.
package rules
