package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

// DefaultTimeout bounds the evaluation of one rule on one set of facts.
const DefaultTimeout = 2 * time.Second

// MaxTimeout is the most a configuration may raise the per-rule timeout
// to: the configuration is read from the working directory and is as
// untrusted as the rules, so it cannot let a rule run for hours.
const MaxTimeout = 30 * time.Second

// MaxExamples is the most example events copied from Facts.Examples into
// one finding.
const MaxExamples = 5

// Confidence weights used by Rank: a finding measured directly in the trace
// (confirmed) counts fully; an inferred one (likely) counts 0.6, so a likely
// finding needs roughly 1.7x the impact of a confirmed one to rank above it.
const (
	WeightConfirmed = 1.0
	WeightLikely    = 0.6
)

// Params overrides rule thresholds: rule id -> param name -> value. A Rego
// rule reads its params as data.stepdoctor.params["<rule-id>"].<name>; an
// expr rule as params.<name>. Only params a rule declares (with a default)
// can be overridden, and only with a value of the same kind (number, bool,
// string, list, object).
type Params map[string]map[string]any

// Config is the part of .stepdoctor.yaml that concerns rules.
type Config struct {
	Disable  []string            // rule ids not to evaluate
	Severity map[string]Severity // rule id -> severity replacing the rule's and its findings'
	Params   Params              // threshold overrides
	Timeout  time.Duration       // per rule evaluation; 0 means DefaultTimeout
}

// evaluator produces raw findings for one rule.
type evaluator interface {
	evaluate(ctx context.Context, s *Set, e *entry, in *evalInput) ([]rawFinding, error)
}

// entry is a loaded rule with its evaluator.
type entry struct {
	rule       Rule
	confidence Confidence // default confidence of its findings
	eval       evaluator
	sevPinned  bool       // Config.Severity set the severity: findings cannot refine it
	link       *TraceLink // script rules: how findings meet a trace (custom.trace)
}

// rawFinding is what an evaluator yields before the Set adds rule fields.
type rawFinding struct {
	msg        string
	impact     float64
	confidence Confidence
	severity   Severity
	evidence   []Evidence
	hasEvid    bool
	loc        *Location // script rules: where the finding points
	fix        string    // the doc's fix variant that fits the trace
}

// Set is a loaded, compiled rule pack. It is immutable and safe for
// concurrent use; Rego queries are prepared once per Set.
type Set struct {
	loaded  []*entry // every rule as loaded (default severity and params), sorted by id
	entries []*entry // enabled rules with Config applied, sorted by id
	regoc   *regoCompiled
	regoq   map[string]*preparedQuery // rule id -> prepared query
	timeout time.Duration
	skipped []string // "path: reason" for entries of rule dirs not read
}

// Skipped lists the entries of the rule directories that were not read
// (named pipes and other files that are not regular), as "path: reason".
func (s *Set) Skipped() []string { return append([]string(nil), s.skipped...) }

var builtinSet = sync.OnceValues(func() (*Set, error) {
	srcs, err := fsSources(builtin.FS, ".", "builtin")
	if err != nil {
		return nil, err
	}
	return loadSources(srcs)
})

// Builtin returns the embedded rule pack (rules/builtin).
func Builtin() (*Set, error) { return builtinSet() }

// Load returns the built-in pack plus the rules in each directory: every
// *.rego (except *_test.rego) and *.yaml / *.yml file directly inside it
// (subdirectories such as cases/ are not read). Rule ids must be unique
// across all of them. A directory named twice (the config's rules: and
// --rules, or another path to it) is read once.
func Load(dirs ...string) (*Set, error) {
	if len(dirs) == 0 {
		return Builtin()
	}
	srcs, err := fsSources(builtin.FS, ".", "builtin")
	if err != nil {
		return nil, err
	}
	var skipped []string
	for _, d := range UniqueDirs(dirs) {
		st, err := os.Stat(d)
		switch {
		case d == "":
			return nil, fmt.Errorf("read rules dir: the path is empty")
		case err != nil:
			return nil, fmt.Errorf("read rules dir %s: %w", d, unwrapPath(err))
		case !st.IsDir():
			return nil, fmt.Errorf("read rules dir %s: not a directory", d)
		}
		more, err := fsSources(os.DirFS(d), ".", d)
		if err != nil {
			return nil, fmt.Errorf("read rules dir %s: %w", d, err)
		}
		for _, src := range more {
			if src.skip != "" {
				skipped = append(skipped, src.path+": "+src.skip)
			} else {
				srcs = append(srcs, src)
			}
		}
	}
	s, err := loadSources(srcs)
	if err != nil {
		return nil, err
	}
	s.skipped = skipped
	return s, nil
}

// UniqueDirs returns dirs in order without repeats: a later path to the
// same directory (os.SameFile: "team/.", a symlink) is dropped. Paths that
// cannot be read stay, for the caller to report.
func UniqueDirs(dirs []string) []string {
	var out []string
	var seen []os.FileInfo
next:
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && d != "" {
			for _, s := range seen {
				if os.SameFile(s, st) {
					continue next
				}
			}
			seen = append(seen, st)
		}
		out = append(out, d)
	}
	return out
}

// unwrapPath drops the *fs.PathError around err: the caller names the
// path itself.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsRuleFileName reports whether Load reads a file of this name directly
// inside a rules directory: *.rego (not *_test.rego), *.yaml, *.yml, and
// no hidden files.
func IsRuleFileName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "_test.rego") {
		return false
	}
	ext := path.Ext(name)
	return ext == ".rego" || ext == ".yaml" || ext == ".yml"
}

// source is one rule file's bytes and the name errors use for it.
type source struct {
	path string
	data []byte
	skip string // why the file was not read (not a regular file)
}

// irregular tells why a directory entry is not a regular file to read
// (a named pipe blocks the reader forever), or "" for a regular file or a
// symlink to one.
func irregular(fsys fs.FS, name string, de fs.DirEntry) string {
	mode := de.Type()
	if mode&fs.ModeSymlink != 0 {
		st, err := fs.Stat(fsys, name)
		if err != nil {
			return "" // reading it reports the error
		}
		mode = st.Mode().Type()
	}
	if mode.IsRegular() {
		return ""
	}
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "not a regular file: a named pipe"
	case mode&fs.ModeCharDevice != 0:
		return "not a regular file: a character device"
	case mode&fs.ModeDevice != 0:
		return "not a regular file: a device"
	case mode&fs.ModeSocket != 0:
		return "not a regular file: a socket"
	}
	return "not a regular file: mode " + mode.String()
}

func fsSources(fsys fs.FS, dir, display string) ([]source, error) {
	des, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []source
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || !IsRuleFileName(name) {
			continue
		}
		if why := irregular(fsys, path.Join(dir, name), de); why != "" {
			out = append(out, source{path: filepath.ToSlash(filepath.Join(display, name)), skip: why})
			continue
		}
		b, err := readFSCapped(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read rule file %s: %w", name, err)
		}
		out = append(out, source{path: filepath.ToSlash(filepath.Join(display, name)), data: b})
	}
	return out, nil
}

func loadSources(srcs []source) (*Set, error) {
	var (
		errs    []error
		entries []*entry
		modules []*regoModule
	)
	for _, src := range srcs {
		switch path.Ext(src.path) {
		case ".rego":
			m, e, err := parseRego(src)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			modules = append(modules, m)
			if e != nil {
				entries = append(entries, e)
			}
		default:
			es, err := parseExprFile(src)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			entries = append(entries, es...)
		}
	}
	byID := map[string]*entry{}
	for _, e := range entries {
		if prev, ok := byID[e.rule.ID]; ok {
			errs = append(errs, fmt.Errorf("load rule %s (%s): duplicate id, first defined at %s", e.rule.ID, e.rule.Source, prev.rule.Source))
			continue
		}
		byID[e.rule.ID] = e
	}
	for _, e := range entries {
		for _, id := range e.rule.SuppressedBy {
			if _, ok := byID[id]; !ok {
				errs = append(errs, fmt.Errorf("load rule %s (%s): suppressed_by %q: no such rule", e.rule.ID, e.rule.Source, id))
			}
		}
	}
	errs = append(errs, checkLinks(entries, byID)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Set{timeout: DefaultTimeout}
	if len(modules) > 0 {
		rc, err := compileRego(modules)
		if err != nil {
			return nil, err
		}
		s.regoc = rc
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rule.ID < entries[j].rule.ID })
	s.loaded = entries
	return s.configure(Config{})
}

// With returns a copy of the set with cfg applied to the rules as loaded
// (an earlier Config is replaced, not merged). Unknown rule ids, unknown
// params and params of the wrong kind are errors. Rego queries are prepared
// again for the new thresholds.
func (s *Set) With(cfg Config) (*Set, error) { return s.configure(cfg) }

func (s *Set) configure(cfg Config) (*Set, error) {
	known := map[string]*entry{}
	for _, e := range s.loaded {
		known[e.rule.ID] = e
	}
	var errs []error
	disabled := map[string]bool{}
	for _, id := range cfg.Disable {
		if known[id] == nil {
			errs = append(errs, fmt.Errorf("disable rule %s: no such rule", id))
		}
		disabled[id] = true
	}
	for id, sev := range cfg.Severity {
		if known[id] == nil {
			errs = append(errs, fmt.Errorf("override severity of rule %s: no such rule", id))
		} else if !validSeverity(sev) {
			errs = append(errs, fmt.Errorf("override severity of rule %s: %q is not one of high, medium, low, info", id, sev))
		}
	}
	for id, ps := range cfg.Params {
		e := known[id]
		if e == nil {
			errs = append(errs, fmt.Errorf("override params of rule %s: no such rule", id))
			continue
		}
		for name, v := range ps {
			def, ok := e.rule.Params[name]
			if !ok {
				errs = append(errs, fmt.Errorf("override param %s of rule %s: the rule declares no such param (has: %s)", name, id, strings.Join(sortedKeys(e.rule.Params), ", ")))
				continue
			}
			nv, err := normalizeParam(v)
			if err == nil {
				err = paramInRange(name, nv)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("param %s.%s: %w", id, name, err))
				continue
			}
			if paramKind(nv) != paramKind(def) {
				errs = append(errs, fmt.Errorf("override param %s of rule %s: want a %s, got a %s", name, id, paramKind(def), paramKind(nv)))
			}
		}
	}
	if cfg.Timeout < 0 || cfg.Timeout > MaxTimeout {
		errs = append(errs, fmt.Errorf("configure rules: timeout %v: want 0 (the default %v) to %v", cfg.Timeout, DefaultTimeout, MaxTimeout))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := &Set{loaded: s.loaded, regoc: s.regoc, timeout: cfg.Timeout, skipped: s.skipped}
	if out.timeout == 0 {
		out.timeout = DefaultTimeout
	}
	for _, e := range s.loaded {
		if disabled[e.rule.ID] {
			continue
		}
		ne := *e
		ne.rule.Params = map[string]any{}
		for k, v := range e.rule.Params {
			ne.rule.Params[k] = v
		}
		for k, v := range cfg.Params[e.rule.ID] {
			nv, _ := normalizeParam(v)
			ne.rule.Params[k] = nv
		}
		ne.link = resolveLink(e, known, cfg)
		if sev, ok := cfg.Severity[e.rule.ID]; ok {
			ne.rule.Severity = sev
			ne.sevPinned = true
		}
		out.entries = append(out.entries, &ne)
	}
	if out.regoc != nil {
		if err := out.prepareRego(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Rules returns the enabled rules sorted by id, with effective severity and
// params.
func (s *Set) Rules() []Rule {
	out := make([]Rule, len(s.entries))
	for i, e := range s.entries {
		out[i] = cloneRule(e.rule)
	}
	return out
}

// Rule returns the enabled rule with the given id.
func (s *Set) Rule(id string) (Rule, bool) {
	for _, e := range s.entries {
		if e.rule.ID == id {
			return cloneRule(e.rule), true
		}
	}
	return Rule{}, false
}

func cloneRule(r Rule) Rule {
	r.Requires = append([]string(nil), r.Requires...)
	r.References = append([]string(nil), r.References...)
	r.SuppressedBy = append([]string(nil), r.SuppressedBy...)
	p := make(map[string]any, len(r.Params))
	for k, v := range r.Params {
		p[k] = v
	}
	r.Params = p
	return r
}

// evalInput is the facts in the shapes the evaluators need, computed once
// per Evaluate.
type evalInput struct {
	facts *facts.Facts
	json  map[string]any // Facts as JSON (null facts are nil), Examples removed
	rego  ast.Value      // json as a Rego value, built on first use
	once  sync.Once
	err   error
}

func newEvalInput(f *facts.Facts) (*evalInput, error) {
	g := *f
	g.Examples = nil
	b, err := json.Marshal(&g)
	if err != nil {
		return nil, fmt.Errorf("encode facts: %w", err)
	}
	m := map[string]any{}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode facts: %w", err)
	}
	return &evalInput{facts: f, json: m}, nil
}

func (in *evalInput) regoValue() (ast.Value, error) {
	in.once.Do(func() {
		in.rego, in.err = ast.InterfaceToValue(in.json)
		if in.err != nil {
			in.err = fmt.Errorf("convert facts to rego: %w", in.err)
		}
	})
	return in.rego, in.err
}

// Evaluate runs every enabled rule on f. A rule whose required facts are
// null (or whose required capability flag has_* is false) is not evaluated
// and is reported in the second result with a hint. Findings come back
// ranked (see Rank); a finding of rule R is dropped when any rule in
// R.SuppressedBy produced a finding on the same facts. Each rule runs under its own timeout
// (Config.Timeout, default DefaultTimeout). A rule that fails (runtime error,
// timeout, malformed finding) does not stop the others: its error is joined
// into the returned error and the findings of the other rules are still
// returned. A canceled ctx stops evaluation and returns ctx's error.
func (s *Set) Evaluate(ctx context.Context, f *facts.Facts) ([]Finding, []NotEvaluated, error) {
	if f == nil {
		return nil, nil, errors.New("evaluate rules: nil facts")
	}
	in, err := newEvalInput(f)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate rules: %w", err)
	}
	findings, notEval, errs, err := s.run(ctx, in, target{
		script: false, verb: "evaluate rules",
		hint: func(missing []string) string { return hintFor(missing, f) },
	})
	if err != nil {
		return nil, nil, err
	}
	Rank(findings)
	return findings, notEval, errors.Join(errs...)
}

// RuleError is one rule that failed on one set of facts: a runtime
// error, a timeout or a malformed finding. Evaluate and EvaluateScript
// join one per failing rule into their error; errors.As finds them.
type RuleError struct {
	Rule   string // rule id
	Source string // file:line the rule was loaded from
	On     string // " on FILE" for script facts, else ""
	Err    error  // why
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("evaluate rule %s (%s)%s: %v", e.Rule, e.Source, e.On, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// target is what a run of rules evaluates: trace facts or one script's
// facts, with how to word errors and "not evaluated" hints.
type target struct {
	script bool   // run the script rules (category script), else the trace rules
	verb   string // error prefix, e.g. "evaluate rules"
	on     string // " on FILE" after a rule in errors, or ""
	hint   func(missing []string) string
	// check validates a finding beyond checkRaw (nil: nothing more).
	check func(*rawFinding) error
}

// run evaluates the rules of target t on in: rules missing a required fact
// are reported as not evaluated; each rule runs under its own timeout; a
// failing rule's error is collected and the others go on; findings of a
// rule whose suppressed_by rules fired are dropped. Only a canceled ctx
// returns err.
func (s *Set) run(ctx context.Context, in *evalInput, t target) (findings []Finding, notEval []NotEvaluated, errs []error, err error) {
	fired := map[string]bool{}
	for _, e := range s.entries {
		r := &e.rule
		if (r.Category == CategoryScript) != t.script {
			continue // trace rules read trace facts, script rules script facts
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", t.verb, err)
		}
		if missing := missingFacts(r.Requires, in); len(missing) > 0 {
			notEval = append(notEval, NotEvaluated{Rule: r.ID, Title: r.Title, Missing: missing, Hint: t.hint(missing)})
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, s.timeout)
		raws, err := e.eval.evaluate(rctx, s, e, in)
		timedOut := rctx.Err() != nil
		cancel()
		if err == nil && timedOut && ctx.Err() == nil {
			// It ran past its budget; whether the evaluator noticed depends
			// on when it last checked, so the verdict does not.
			err = context.DeadlineExceeded
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", t.verb, ctx.Err())
			}
			if timedOut {
				err = fmt.Errorf("timed out after %v: %w", s.timeout, err)
			}
			errs = append(errs, &RuleError{Rule: r.ID, Source: r.Source, On: t.on, Err: err})
			continue
		}
		for _, raw := range raws {
			err := checkRaw(&raw)
			if err == nil && t.check != nil {
				err = t.check(&raw)
			}
			if err != nil {
				errs = append(errs, &RuleError{Rule: r.ID, Source: r.Source, On: t.on, Err: err})
				continue
			}
			findings = append(findings, s.finding(e, raw, in))
			fired[r.ID] = true
		}
	}
	suppressed := map[string]bool{}
	for _, e := range s.entries {
		for _, id := range e.rule.SuppressedBy {
			if fired[id] {
				suppressed[e.rule.ID] = true
			}
		}
	}
	kept := findings[:0]
	for _, fd := range findings {
		if !suppressed[fd.Rule] {
			kept = append(kept, fd)
		}
	}
	return kept, notEval, errs, nil
}

func checkRaw(raw *rawFinding) error {
	if strings.TrimSpace(raw.msg) == "" {
		return errors.New("finding has an empty message")
	}
	if math.IsNaN(raw.impact) || raw.impact < 0 || raw.impact > 1 {
		return fmt.Errorf("finding impact %v is outside 0..1", raw.impact)
	}
	if raw.confidence != "" && !validConfidence(raw.confidence) {
		return fmt.Errorf("finding confidence %q is not confirmed or likely", raw.confidence)
	}
	if raw.severity != "" && !validSeverity(raw.severity) {
		return fmt.Errorf("finding severity %q is not one of high, medium, low, info", raw.severity)
	}
	for _, ev := range raw.evidence {
		if ev.Name == "" || math.IsNaN(ev.Value) || math.IsInf(ev.Value, 0) {
			return fmt.Errorf("finding evidence %q has no name or a non-finite value", ev.Name)
		}
	}
	return nil
}

func (s *Set) finding(e *entry, raw rawFinding, in *evalInput) Finding {
	r := &e.rule
	fd := Finding{
		Rule:       r.ID,
		Title:      r.Title,
		Severity:   r.Severity,
		Category:   r.Category,
		Message:    raw.msg,
		Impact:     raw.impact,
		Confidence: e.confidence,
		Evidence:   raw.evidence,
		Doc:        r.Doc,
		References: append([]string(nil), r.References...),
	}
	// A finding may lower the rule's severity, never raise it (the rule's
	// severity is the most a finding gets, as `rules list` says); a
	// configured override (already in r.Severity) wins.
	if raw.severity != "" && !e.sevPinned && severityRank(raw.severity) >= severityRank(r.Severity) {
		fd.Severity = raw.severity
	}
	fd.SeverityPinned = e.sevPinned
	fd.Fix = raw.fix
	if raw.confidence != "" {
		fd.Confidence = raw.confidence
	}
	if raw.loc != nil {
		loc := *raw.loc
		fd.Location = &loc
	}
	if fd.Confidence == "" {
		fd.Confidence = Confirmed
	}
	if !raw.hasEvid {
		fd.Evidence = autoEvidence(r.Requires, in)
	}
	if fd.Evidence == nil {
		fd.Evidence = []Evidence{}
	}
	if r.Examples != "" {
		ex := in.facts.Examples[r.Examples]
		if len(ex) > MaxExamples {
			ex = ex[:MaxExamples]
		}
		if len(ex) > 0 {
			fd.Examples = append([]facts.EventRef(nil), ex...)
		}
	}
	return fd
}

// autoEvidence lists the numeric required facts as evidence, with the unit
// of their catalogue entry.
func autoEvidence(requires []string, in *evalInput) []Evidence {
	var out []Evidence
	for _, name := range requires {
		v, ok := asFloat(in.json[name])
		if !ok {
			continue
		}
		out = append(out, Evidence{Name: name, Value: v, Unit: string(facts.UnitOf(name))})
	}
	return out
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// missingFacts returns the required facts that are null in the facts JSON,
// and required capability flags (has_*) that are false.
func missingFacts(requires []string, in *evalInput) []string {
	var out []string
	for _, name := range requires {
		v, present := in.json[name]
		switch {
		case !present || v == nil:
			out = append(out, name)
		case strings.HasPrefix(name, "has_") && v == false:
			out = append(out, name)
		}
	}
	return out
}

// Score is the ranking key of a finding: impact x confidence weight
// (WeightConfirmed, WeightLikely; any other confidence counts as likely),
// rounded to 6 decimals so that floating-point noise cannot split a tie.
func Score(f Finding) float64 {
	w := WeightLikely
	if f.Confidence == Confirmed {
		w = WeightConfirmed
	}
	return math.Round(f.Impact*w*1e6) / 1e6
}

// severityRank orders severities high (0) to info (3); unknown last.
func severityRank(s Severity) int {
	for i, v := range Severities {
		if s == v {
			return i
		}
	}
	return len(Severities)
}

// Rank sorts findings in place: Score descending (impact x confidence
// weight: confirmed 1.0, likely 0.6), then severity (high first), then rule
// id, then message. The order is deterministic for any input order.
//
// Severity then follows the order (docs/ARCHITECTURE.md "Impact": a listed
// finding never has a higher severity than one ranked above it): a finding
// ranked below a less severe one takes that severity. Severities a team
// configured (Config.Severity) are kept as set, and such a finding moves to
// the head of its severity (a pinned high above every medium, a pinned low
// below every medium), so that the promise holds for it too. An info
// finding is a note, not a grade of cost: it is kept as info and moves
// below the graded ones, so a note with a large impact (a team's info rule)
// never demotes the findings after it, which --fail-on reads.
func Rank(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if sa, sb := Score(a), Score(b); sa != sb {
			return sa > sb
		}
		if ra, rb := severityRank(a.Severity), severityRank(b.Severity); ra != rb {
			return ra < rb
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Message != b.Message {
			return a.Message < b.Message
		}
		return a.Impact > b.Impact
	})
	floor := 0 // the least severe rank seen so far
	pinned := false
	for i := range fs {
		f := &fs[i]
		if f.SeverityPinned || f.Severity == SeverityInfo {
			pinned = true
			continue
		}
		if r := severityRank(f.Severity); r < floor && floor < len(Severities) {
			f.Severity = Severities[floor]
		} else {
			floor = max(floor, r)
		}
	}
	if pinned {
		// The others' severities now fall in rank order: a stable sort by
		// severity moves only the pinned ones.
		sort.SliceStable(fs, func(i, j int) bool { return severityRank(fs[i].Severity) < severityRank(fs[j].Severity) })
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
