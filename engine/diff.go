package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/rules"
)

// DiffSchemaVersion versions the JSON shape of DiffResult.
const DiffSchemaVersion = 1

// DiffResult compares two analyses of the same workload (before and after
// a change), trace by trace.
type DiffResult struct {
	SchemaVersion int        `json:"schema_version"`
	Pairs         []PairDiff `json:"pairs"`
	// Unpaired lists traces present on one side only.
	Unpaired []string `json:"unpaired,omitempty"`
	// RuleErrors lists the rules that failed or timed out, on the before
	// side's traces, then the after side's (each names its trace): the
	// findings compared may miss theirs.
	RuleErrors []RuleError `json:"rule_errors,omitempty"`
	// About says what made the report (set by the CLI; nil in tests).
	About *About `json:"-"`
}

// PairDiff compares one trace (one rank) before and after.
type PairDiff struct {
	Before Input  `json:"before"`
	After  Input  `json:"after"`
	Rank   *int64 `json:"rank"` // nil when the pair has no rank identity (paired by input order)
	// Warnings say why the two sides may not be comparable (another
	// device, rank, world size or profiler options); reports print them
	// first.
	Warnings []string `json:"warnings"`
	// Steps compares the step times (see StepComparison); nil without
	// steps on both sides.
	Steps *StepComparison `json:"step_time"`
	// SpeedUp is Steps.SpeedUp: median step time before / after, per
	// sample when the batch sizes differ (> 1 is faster); nil without
	// steps on both sides.
	SpeedUp *float64 `json:"speed_up"`
	// Noise is the relative change below which a difference is noise:
	// exp(Steps.Band) - 1, the robust spread of both runs' steps, at least
	// MinNoise.
	Noise float64 `json:"noise"`
	// NoiseMeasured is false when a side has fewer than MinSteps steps:
	// the spread is unknown and MinNoise is assumed.
	NoiseMeasured bool           `json:"noise_measured"`
	Facts         []FactDelta    `json:"facts"`
	Resolved      []FindingDelta `json:"resolved"`
	New           []FindingDelta `json:"new"`
	Unchanged     []FindingDelta `json:"unchanged"`
	// Inconclusive are findings on one side only whose rule failed on the
	// other side (DiffResult.RuleErrors): neither resolved nor new.
	Inconclusive []FindingDelta `json:"inconclusive,omitempty"`
	// Kernels and Ops compare the kernel and operator tables by time per
	// step.
	Kernels TableDiff `json:"kernels"`
	Ops     TableDiff `json:"ops"`
}

// FactDelta is one numeric fact before and after. Abs is after - before;
// Rel is Abs / |before| (nil when before is 0). Noise marks a change within
// the steps' own spread; Worse says whether the change is in the bad
// direction for this fact (never for a fact whose catalogue direction is
// neutral).
type FactDelta struct {
	Name   string   `json:"name"`
	Unit   string   `json:"unit"`
	Before *float64 `json:"before"`
	After  *float64 `json:"after"`
	Abs    *float64 `json:"abs"`
	Rel    *float64 `json:"rel"`
	Noise  bool     `json:"noise"`
	Worse  bool     `json:"worse"`
}

// FindingDelta is a rule's finding on either side (impact 0 when absent).
type FindingDelta struct {
	Rule         string         `json:"rule"`
	Title        string         `json:"title"`
	Severity     rules.Severity `json:"severity"`
	ImpactBefore float64        `json:"impact_before"`
	ImpactAfter  float64        `json:"impact_after"`
}

// MinNoise is the smallest relative change that is not noise (1%), used
// when the steps' spread is smaller or unknown.
const MinNoise = 0.01

// RatioNoise is the absolute change of a ratio fact below which it is
// noise whatever its relative change (the precision facts are checked to).
const RatioNoise = 0.005

// Diff pairs the traces of before and after (one each, or by rank) and
// compares facts and findings.
func Diff(before, after *Result) *DiffResult {
	d, _, _ := diff(before, after)
	return d
}

// diff is Diff, with the paths of the traces of each side that paired
// with none of the other's.
func diff(before, after *Result) (d *DiffResult, onlyBefore, onlyAfter []string) {
	d = &DiffResult{SchemaVersion: DiffSchemaVersion}
	d.RuleErrors = append(append(d.RuleErrors, before.RuleErrors...), after.RuleErrors...)
	pairs, onlyBefore, onlyAfter := pairTraces(before.Traces, after.Traces)
	d.Unpaired = append(labelled("before: ", onlyBefore), labelled("after: ", onlyAfter)...)
	failed := failedRules(d.RuleErrors)
	byRank := len(before.Traces) > 1 || len(after.Traces) > 1
	for _, p := range pairs {
		pd := diffPair(p[0], p[1], failed[p[0].Input.Path], failed[p[1].Input.Path])
		if byRank && (p[0].RankSource == RankFromInputOrder || p[1].RankSource == RankFromInputOrder) {
			pd.Warnings = append(pd.Warnings, "paired by input order: the traces have no rank identity (distinct distributedInfo ranks or rank numbers in their names), so this may not be the same rank")
			pd.Rank = nil // a position in the input, not a rank: reports do not call it one
		}
		d.Pairs = append(d.Pairs, pd)
	}
	return d, onlyBefore, onlyAfter
}

// labelled prefixes each path with label.
func labelled(label string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, label+p)
	}
	return out
}

// failedRules maps a trace path to the ids of the rules that failed on it;
// the id "" (an error not tied to one rule) stands for every rule.
func failedRules(errs []RuleError) map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for _, e := range errs {
		if m[e.Trace] == nil {
			m[e.Trace] = map[string]bool{}
		}
		m[e.Trace][e.Rule] = true
	}
	return m
}

// pairTraces pairs the traces of b and a: the only one of each, else by
// rank; it also returns the paths of each side's traces left unpaired.
func pairTraces(b, a []*TraceResult) (pairs [][2]*TraceResult, onlyB, onlyA []string) {
	if len(b) == 1 && len(a) == 1 {
		return [][2]*TraceResult{{b[0], a[0]}}, nil, nil
	}
	byRank := map[int64]*TraceResult{}
	for _, tr := range a {
		if tr.Rank != nil {
			byRank[*tr.Rank] = tr
		}
	}
	used := map[*TraceResult]bool{}
	for _, tr := range b {
		if tr.Rank != nil && byRank[*tr.Rank] != nil {
			pairs = append(pairs, [2]*TraceResult{tr, byRank[*tr.Rank]})
			used[byRank[*tr.Rank]] = true
			continue
		}
		onlyB = append(onlyB, tr.Input.Path)
	}
	for _, tr := range a {
		if !used[tr] {
			onlyA = append(onlyA, tr.Input.Path)
		}
	}
	return pairs, onlyB, onlyA
}

// diffPair compares one pair; failedB and failedA are the rules that
// failed on each side (see failedRules).
func diffPair(b, a *TraceResult, failedB, failedA map[string]bool) PairDiff {
	p := PairDiff{Before: b.Input, After: a.Input, Rank: a.Rank, Noise: MinNoise}
	p.Warnings = comparability(b, a)
	if c := compareSteps(b.Facts, a.Facts); c != nil {
		p.Steps = c
		p.SpeedUp = ptr(c.SpeedUp)
		p.Noise = math.Expm1(c.Band)
		p.NoiseMeasured = c.Measured
	}
	p.Kernels = diffKernels(b.Facts, a.Facts, p.Noise)
	p.Ops = diffOps(b.Facts, a.Facts, p.Noise)
	bv, av := numericFacts(b.Facts), numericFacts(a.Facts)
	for _, def := range facts.Catalogue {
		for _, name := range def.Leaves() {
			x, y := bv[name], av[name]
			if x == nil && y == nil {
				continue
			}
			fd := FactDelta{Name: name, Unit: string(def.Unit), Before: x, After: y}
			if x != nil && y != nil {
				abs := *y - *x
				fd.Abs = &abs
				if *x != 0 {
					fd.Rel = ptr(abs / math.Abs(*x))
				}
				fd.Noise = abs == 0 || (fd.Rel != nil && math.Abs(*fd.Rel) <= p.Noise) || (def.Unit == facts.UnitRatio && math.Abs(abs) < RatioNoise)
				fd.Worse = (abs > 0 && def.Direction == facts.LowerBetter) || (abs < 0 && def.Direction == facts.HigherBetter)
			}
			p.Facts = append(p.Facts, fd)
		}
	}
	bf, af := byRule(b.Findings), byRule(a.Findings)
	for _, id := range sortedKeys(bf, af) {
		x, y := bf[id], af[id]
		switch {
		case x != nil && y == nil && (failedA[id] || failedA[""]):
			p.Inconclusive = append(p.Inconclusive, delta(x, x.Impact, 0))
		case x == nil && y != nil && (failedB[id] || failedB[""]):
			p.Inconclusive = append(p.Inconclusive, delta(y, 0, y.Impact))
		case x != nil && y == nil:
			p.Resolved = append(p.Resolved, delta(x, x.Impact, 0))
		case x == nil && y != nil:
			p.New = append(p.New, delta(y, 0, y.Impact))
		default:
			p.Unchanged = append(p.Unchanged, delta(y, x.Impact, y.Impact))
		}
	}
	return p
}

// numericFacts flattens the facts JSON to numeric leaves (one level of
// nesting, as name.field).
func numericFacts(f *facts.Facts) map[string]*float64 {
	b, _ := json.Marshal(f)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	out := map[string]*float64{}
	for k, v := range m {
		switch x := v.(type) {
		case float64:
			out[k] = ptr(x)
		case map[string]any:
			for k2, v2 := range x {
				if y, ok := v2.(float64); ok {
					out[k+"."+k2] = ptr(y)
				}
			}
		}
	}
	return out
}

func byRule(fs []rules.Finding) map[string]*rules.Finding {
	m := map[string]*rules.Finding{}
	for i := range fs {
		if _, ok := m[fs[i].Rule]; !ok {
			m[fs[i].Rule] = &fs[i]
		}
	}
	return m
}

func sortedKeys(ms ...map[string]*rules.Finding) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func delta(f *rules.Finding, before, after float64) FindingDelta {
	return FindingDelta{Rule: f.Rule, Title: f.Title, Severity: f.Severity, ImpactBefore: before, ImpactAfter: after}
}

// Regression is a fact that got worse by more than the allowed bound.
type Regression struct {
	Pair   int     // index into DiffResult.Pairs
	Fact   string  // a fact leaf ("... per sample" when divided by the batch sizes), or StepTimeGate
	Change float64 // relative change in the worse direction (0.12 = 12% worse); +Inf from 0
	// Before and After are the fact's values (per sample when so named),
	// in Unit; absent (Unit "") for the step-time gate, whose verdict line
	// gives them.
	Before, After float64
	Unit          string
}

// StepTimeGate names the step-time comparison among regressions: the
// median of the capped step durations (step_time_us.p50), per sample when
// the batch sizes differ, beyond the noise band of both runs.
const StepTimeGate = "step_time_us.p50"

func (r Regression) String() string {
	if r.Unit == "" {
		return fmt.Sprintf("%s regressed %.1f%%", r.Fact, 100*r.Change)
	}
	v := facts.Unit(r.Unit).Format
	if math.IsInf(r.Change, 1) {
		return fmt.Sprintf("%s regressed from 0 to %s", r.Fact, v(r.After))
	}
	return fmt.Sprintf("%s regressed %.1f%% (%s → %s)", r.Fact, 100*r.Change, v(r.Before), v(r.After))
}

// Regressions lists, per pair, a step-time slowdown (StepTimeGate, always
// gated) and the facts among names (leaves such as step_time_us.p90 or
// gpu_idle_ratio) that got worse by more than bound (relative, 0.1 = 10%),
// ignoring changes within the noise. A name that is not a leaf with a
// direction (facts.RegressionLeaves) never matches; the CLI refuses it.
func (d *DiffResult) Regressions(names []string, bound float64) []Regression {
	var out []Regression
	for i, p := range d.Pairs {
		if c := p.Steps; c != nil {
			if slow := c.RelChange(); -c.LogRatio > c.Band && slow > bound {
				name := StepTimeGate
				if c.PerSample {
					name += " per sample"
				}
				out = append(out, Regression{Pair: i, Fact: name, Change: slow})
			}
		}
		for _, fd := range p.Facts {
			if fd.Name == StepTimeGate || !contains(names, fd.Name) || fd.Abs == nil {
				continue
			}
			r := Regression{Pair: i, Fact: fd.Name, Before: *fd.Before, After: *fd.After, Unit: fd.Unit, Change: math.Inf(1)}
			if c := p.Steps; c != nil && c.PerSample && strings.HasPrefix(fd.Name, "step_time_us.") {
				// The step time of another batch size, compared per sample
				// as the gate is, beyond the same noise band.
				r.Fact += " per sample"
				r.Before /= float64(*c.Before.BatchSize)
				r.After /= float64(*c.After.BatchSize)
				if r.After <= r.Before*(1+p.Noise) {
					continue
				}
			} else if !fd.Worse || fd.Noise {
				continue
			}
			if r.Before != 0 {
				r.Change = math.Abs(r.After-r.Before) / math.Abs(r.Before)
			}
			if r.Change > bound {
				out = append(out, r)
			}
		}
	}
	return out
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// CompareBaseline compares run with its baseline run base (analyze
// --baseline PATH): the trace pairs as Diff makes them, the regressions
// over bound (relative, 0.1 = 10%) of the step-time gate and of the fact
// leaves names, and the Baseline a report shows. Unpaired traces are
// named "baseline: PATH" and "this run: PATH".
func CompareBaseline(base, run *Result, path string, names []string, bound float64) (*DiffResult, []Regression, *Baseline) {
	d, onlyBase, onlyRun := diff(base, run)
	regs := d.Regressions(names, bound)
	b := &Baseline{Path: path, MaxRegression: bound, Pairs: []BaselinePair{},
		Unpaired: append(labelled("baseline: ", onlyBase), labelled("this run: ", onlyRun)...)}
	for i, p := range d.Pairs {
		bp := BaselinePair{Baseline: p.Before.Path, Trace: p.After.Path, Rank: p.Rank, Warnings: append([]string{}, p.Warnings...),
			Steps: p.Steps, Noise: p.Noise, SpeedUp: p.SpeedUp, Regressions: []string{}}
		for _, r := range regs {
			if r.Pair == i {
				bp.Regressions = append(bp.Regressions, r.String())
			}
		}
		b.Pairs = append(b.Pairs, bp)
	}
	return d, regs, b
}
