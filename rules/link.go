package rules

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Script-to-trace links
//
// A script rule says in its METADATA how its findings meet a trace
// (stepdoctor analyze --script joins them, engine.JoinScript):
//
//	# custom:
//	#   trace:
//	#     same_cause: [dataloader-bound, idle-gap-dataloader]  # trace rules measuring the same cause
//	#     stack_site: dataloader          # with_stack: the hot events (facts.PySite.Kind) it causes
//	#     confirms:                       # the trace fact that confirms a finding
//	#       rule: dataloader-bound        # the trace rule whose threshold decides
//	#       fact: dataloader_time_ratio   # compared with that rule's param
//	#       above: min_ratio              # fact > param (at_least: fact >= param)
//	#       when: [dataloader_single_process]   # boolean trace facts that must be true
//	#       impact: dataloader_time_ratio # the measured impact (null: the prior stays)
//	#       shows: a single-process DataLoader taking {dataloader_time_ratio} of step time
//	#       shows_impact: ""              # appended when the impact fact is measured
//
// The threshold is the named param of the trace rule with its effective
// value, so a .stepdoctor.yaml override of that param (params:
// {dataloader-bound: {min_ratio: 0.1}}) moves the join too. {fact} in the
// sentences prints a trace fact by its catalogue unit (a ratio as a
// percentage with one decimal, a count as an integer, others with one
// decimal).

// TraceLink is how a script rule's findings meet a trace.
type TraceLink struct {
	// SameCause lists trace rules that measure the script rule's cause: a
	// script finding merges into a finding of one of them.
	SameCause []string
	// StackSite is the kind of hot host event (facts.PySite.Kind: sync,
	// dataloader, memcpy) the cause produces, "" for none.
	StackSite string
	// Confirms is the trace measurement that confirms a finding; nil for
	// none.
	Confirms *Confirms
}

// Confirms is a script rule's confirming trace measurement.
type Confirms struct {
	Rule    string   // trace rule whose param is the threshold
	Fact    string   // trace fact compared with the threshold
	Param   string   // the param of Rule
	AtLeast bool     // Fact >= Min (else Fact > Min)
	Min     float64  // effective value of Rule's Param (config applied)
	When    []string // boolean trace facts that must be true
	Impact  string   // trace fact giving the measured impact
	// Shows and ShowsImpact are the evidence sentence ("the trace shows
	// ..."); ShowsImpact is appended when the Impact fact is measured.
	Shows, ShowsImpact string
}

// Confirmation is a trace measurement backing a script finding.
type Confirmation struct {
	// Impact is the measured share of step time; HasImpact is false when
	// the impact fact is null (the finding keeps its prior).
	Impact    float64
	HasImpact bool
	Why       string // "the trace shows ..."
	Evidence  []Evidence
}

// TraceLink returns the trace link of the enabled script rule id.
func (s *Set) TraceLink(id string) (TraceLink, bool) {
	for _, e := range s.entries {
		if e.rule.ID == id && e.link != nil {
			l := *e.link
			l.SameCause = slices.Clone(l.SameCause)
			if l.Confirms != nil {
				c := *l.Confirms
				c.When = slices.Clone(c.When)
				l.Confirms = &c
			}
			return l, true
		}
	}
	return TraceLink{}, false
}

// Confirm reports whether trace facts f confirm a finding of script rule
// id (its TraceLink.Confirms), with the measured impact and evidence.
func (s *Set) Confirm(id string, f *facts.Facts) (Confirmation, bool) {
	l, ok := s.TraceLink(id)
	if !ok || l.Confirms == nil || f == nil {
		return Confirmation{}, false
	}
	c := l.Confirms
	for _, name := range c.When {
		if b, ok := factValue(f, name).(bool); !ok || !b {
			return Confirmation{}, false
		}
	}
	v, ok := factNumber(f, c.Fact)
	if !ok || v < c.Min || (!c.AtLeast && v == c.Min) {
		return Confirmation{}, false
	}
	out := Confirmation{
		Why:      "the trace shows " + showFacts(c.Shows, f),
		Evidence: []Evidence{{Name: c.Fact, Value: v, Unit: string(facts.UnitOf(c.Fact))}},
	}
	if r, ok := factNumber(f, c.Impact); ok {
		out.Impact, out.HasImpact = r, true
		out.Why += showFacts(c.ShowsImpact, f)
		if c.Impact != c.Fact {
			out.Evidence = append(out.Evidence, Evidence{Name: c.Impact, Value: r, Unit: string(facts.UnitOf(c.Impact))})
		}
	}
	return out, true
}

var placeholder = regexp.MustCompile(`\{([a-z0-9_]+)\}`)

// showFacts fills {fact} placeholders with the facts' values.
func showFacts(text string, f *facts.Facts) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := factNumber(f, name)
		if !ok {
			return "?"
		}
		switch facts.UnitOf(name) {
		case facts.UnitRatio:
			return fmt.Sprintf("%.1f%%", 100*v)
		case facts.UnitCount:
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%.1f", v)
	})
}

// factValue returns the value of the top-level fact name (nil when null
// or unknown).
func factValue(f *facts.Facts, name string) any {
	fi, ok := factCatalogue()[name]
	if !ok {
		return nil
	}
	v := reflect.ValueOf(f).Elem().Field(fi.field)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return v.Interface()
}

// factNumber returns a numeric fact as float64.
func factNumber(f *facts.Facts, name string) (float64, bool) {
	switch x := factValue(f, name).(type) {
	case float64:
		return x, !math.IsNaN(x)
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

var traceKeys = []string{"same_cause", "stack_site", "confirms"}
var confirmsKeys = []string{"rule", "fact", "above", "at_least", "when", "impact", "shows", "shows_impact"}

// parseTraceLink reads custom.trace of a script rule's METADATA; rule
// ids and params are checked against the whole pack by checkLinks.
func parseTraceLink(v any) (*TraceLink, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("custom field trace: want a mapping, got %v", v)
	}
	var errs []error
	for k := range m {
		if !slices.Contains(traceKeys, k) {
			errs = append(errs, fmt.Errorf("custom field trace: unknown key %q (allowed: %s)", k, strings.Join(traceKeys, ", ")))
		}
	}
	str := func(m map[string]any, k string) string {
		x, ok := m[k]
		if !ok || x == nil {
			return ""
		}
		s, ok := x.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("custom field trace: %s: want a string, got %v", k, x))
		}
		return s
	}
	list := func(m map[string]any, k string) []string {
		x, ok := m[k]
		if !ok || x == nil {
			return nil
		}
		xs, ok := x.([]any)
		var out []string
		for _, e := range xs {
			s, isStr := e.(string)
			ok = ok && isStr
			out = append(out, s)
		}
		if !ok {
			errs = append(errs, fmt.Errorf("custom field trace: %s: want a list of strings, got %v", k, x))
		}
		return out
	}
	l := &TraceLink{SameCause: list(m, "same_cause"), StackSite: str(m, "stack_site")}
	if cv, ok := m["confirms"]; ok && cv != nil {
		cm, ok := cv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("custom field trace: confirms: want a mapping, got %v", cv)
		}
		for k := range cm {
			if !slices.Contains(confirmsKeys, k) {
				errs = append(errs, fmt.Errorf("custom field trace: confirms: unknown key %q (allowed: %s)", k, strings.Join(confirmsKeys, ", ")))
			}
		}
		c := &Confirms{Rule: str(cm, "rule"), Fact: str(cm, "fact"), When: list(cm, "when"), Impact: str(cm, "impact"),
			Shows: str(cm, "shows"), ShowsImpact: str(cm, "shows_impact")}
		above, atLeast := str(cm, "above"), str(cm, "at_least")
		switch {
		case (above == "") == (atLeast == ""):
			errs = append(errs, errors.New("custom field trace: confirms: give one of above or at_least (a param of the confirming rule)"))
		case above != "":
			c.Param = above
		default:
			c.Param, c.AtLeast = atLeast, true
		}
		if c.Rule == "" || c.Fact == "" || c.Impact == "" || c.Shows == "" {
			errs = append(errs, errors.New("custom field trace: confirms: rule, fact, impact and shows are required"))
		}
		cat := factCatalogue()
		names := append([]string{c.Fact, c.Impact}, c.When...)
		for _, mm := range placeholder.FindAllStringSubmatch(c.Shows+c.ShowsImpact, -1) {
			names = append(names, mm[1])
		}
		for i, name := range names {
			fi, ok := cat[name]
			if name == "" {
				continue
			}
			if !ok {
				errs = append(errs, fmt.Errorf("custom field trace: confirms: %q is no trace fact (stepdoctor facts --list names them)", name))
				continue
			}
			k := fi.typ.Kind()
			if fi.nullable {
				k = fi.typ.Elem().Kind()
			}
			isBool := k == reflect.Bool
			isNum := k == reflect.Float64 || k == reflect.Int64 || k == reflect.Int
			if when := i >= 2 && i < 2+len(c.When); when && !isBool {
				errs = append(errs, fmt.Errorf("custom field trace: confirms: when %q is not a boolean fact", name))
			} else if !when && !isNum {
				errs = append(errs, fmt.Errorf("custom field trace: confirms: %q is not a numeric fact", name))
			}
		}
		l.Confirms = c
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// checkLinks checks the trace links against the pack: same_cause and
// confirms name trace rules, and confirms a number param of its rule.
func checkLinks(entries []*entry, byID map[string]*entry) []error {
	var errs []error
	for _, e := range entries {
		if e.link == nil {
			continue
		}
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("load rule %s (%s): trace: %s", e.rule.ID, e.rule.Source, fmt.Sprintf(format, a...)))
		}
		if e.rule.Category != CategoryScript {
			bad("only script rules link to the trace")
		}
		for _, id := range e.link.SameCause {
			if t, ok := byID[id]; !ok || t.rule.Category == CategoryScript {
				bad("same_cause %q: no such trace rule", id)
			}
		}
		c := e.link.Confirms
		if c == nil {
			continue
		}
		t, ok := byID[c.Rule]
		if !ok || t.rule.Category == CategoryScript {
			bad("confirms rule %q: no such trace rule", c.Rule)
			continue
		}
		if _, ok := t.rule.Params[c.Param].(float64); !ok {
			bad("confirms param %q: rule %s has no number param of that name (has: %s)", c.Param, c.Rule, strings.Join(sortedKeys(t.rule.Params), ", "))
		}
	}
	return errs
}

// resolveLink copies e's link with the confirming threshold taken from
// the effective params (the confirming rule's default, or cfg's override;
// a disabled confirming rule still lends its threshold).
func resolveLink(e *entry, known map[string]*entry, cfg Config) *TraceLink {
	if e.link == nil || e.link.Confirms == nil {
		return e.link
	}
	l := *e.link
	c := *l.Confirms
	c.Min, _ = known[c.Rule].rule.Params[c.Param].(float64)
	if v, ok := cfg.Params[c.Rule][c.Param]; ok {
		if nv, err := normalizeParam(v); err == nil {
			c.Min, _ = nv.(float64)
		}
	}
	l.Confirms = &c
	return &l
}
