package rules

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Categories are the rule categories docs/ARCHITECTURE.md "Rules" allows.
var Categories = []string{
	"input-pipeline", "host-overhead", "memory-transfer", "kernel-efficiency",
	"memory", "distributed", "profiling-setup", "script",
}

// Severities in descending order of urgency.
var Severities = []Severity{SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// factInfo describes one top-level Facts field as rules see it.
type factInfo struct {
	name     string       // json (and expr) name
	field    int          // index in facts.Facts
	typ      reflect.Type // Go type
	nullable bool         // pointer: JSON null when the trace cannot give it
}

var (
	factsOnce  sync.Once
	factsByTag map[string]factInfo
	factNames  []string
)

// factCatalogue returns the Facts fields rules may name in requires,
// keyed by json name. Fields tagged expr:"-" (Examples) are excluded.
func factCatalogue() map[string]factInfo {
	factsOnce.Do(func() {
		factsByTag = map[string]factInfo{}
		t := reflect.TypeOf(facts.Facts{})
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Tag.Get("expr") == "-" {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			factsByTag[name] = factInfo{name: name, field: i, typ: f.Type, nullable: f.Type.Kind() == reflect.Pointer}
			factNames = append(factNames, name)
		}
		sort.Strings(factNames)
	})
	return factsByTag
}

// FactNames lists the fact names (json tags of facts.Facts) a rule may list
// in requires, sorted.
func FactNames() []string {
	factCatalogue()
	return append([]string(nil), factNames...)
}

// validateRule checks the documented fields of a rule. The error names the
// offending field; callers wrap it with the file and rule id.
func validateRule(r *Rule) error {
	var errs []error
	if r.ID == "" {
		errs = append(errs, errors.New("missing field id"))
	} else if !idPattern.MatchString(r.ID) {
		errs = append(errs, fmt.Errorf("id %q is not kebab-case", r.ID))
	}
	if strings.TrimSpace(r.Title) == "" {
		errs = append(errs, errors.New("missing field title"))
	}
	switch {
	case r.Severity == "":
		errs = append(errs, errors.New("missing field severity"))
	case !validSeverity(r.Severity):
		errs = append(errs, fmt.Errorf("severity %q is not one of high, medium, low, info", r.Severity))
	}
	switch {
	case r.Category == "":
		errs = append(errs, errors.New("missing field category"))
	case !validCategory(r.Category):
		errs = append(errs, fmt.Errorf("category %q is not one of %s", r.Category, strings.Join(Categories, ", ")))
	}
	if len(r.Requires) == 0 {
		errs = append(errs, errors.New("missing field requires (list the facts the rule reads)"))
	}
	cat := factCatalogue()
	seen := map[string]bool{}
	if r.Category == CategoryScript {
		errs = append(errs, validateScriptRequires(r)...)
	}
	for _, name := range r.Requires {
		if _, ok := cat[name]; !ok && r.Category != CategoryScript {
			errs = append(errs, fmt.Errorf("requires %q: no such fact (stepdoctor facts --list names them)", name))
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("requires %q twice", name))
		}
		seen[name] = true
	}
	if strings.TrimSpace(r.Doc) == "" {
		errs = append(errs, errors.New("missing field doc (in Rego: the METADATA description)"))
	}
	if len(r.References) == 0 {
		errs = append(errs, errors.New("missing field references"))
	}
	for _, ref := range r.References {
		u, err := url.Parse(ref)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("reference %q is not an http(s) URL", ref))
		}
	}
	if r.Examples != "" && !idPattern.MatchString(strings.ReplaceAll(r.Examples, "_", "-")) {
		errs = append(errs, fmt.Errorf("examples key %q is not snake_case", r.Examples))
	}
	for _, id := range r.SuppressedBy {
		if id == r.ID {
			errs = append(errs, errors.New("suppressed_by names the rule itself"))
		}
	}
	return errors.Join(errs...)
}

// validConfidence reports whether c is a confidence a rule or finding may
// give: confirmed or likely ("" leaves the rule's default).
func validConfidence(c Confidence) bool { return c == Confirmed || c == Likely }

func validSeverity(s Severity) bool {
	for _, v := range Severities {
		if s == v {
			return true
		}
	}
	return false
}

func validCategory(c string) bool {
	for _, v := range Categories {
		if c == v {
			return true
		}
	}
	return false
}

// normalizeParam converts YAML/JSON numbers to float64 so that params have
// one numeric type, and checks the value is plain data.
func normalizeParam(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float32:
		return finiteParam(float64(x))
	case float64:
		return finiteParam(x)
	case bool, string:
		return x, nil
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("not a finite number (%v)", x)
		}
		return finiteParam(f)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalizeParam(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalizeParam(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case nil:
		return nil, errors.New("param value is null")
	default:
		return nil, fmt.Errorf("param value of type %T is not plain data", v)
	}
}

func normalizeParams(p map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(p))
	for k, v := range p {
		n, err := normalizeParam(v)
		if err == nil {
			err = paramInRange(k, n)
		}
		if err != nil {
			return nil, fmt.Errorf("param %s: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// finiteParam refuses NaN and infinities: every comparison with NaN is
// false (a threshold that silently never fires), and OPA panics on them.
func finiteParam(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("not a finite number (%v)", f)
	}
	return f, nil
}

// paramInRange checks a number param against the range its name implies,
// by the fact naming convention: *_ratio, *_share and impact are 0..1;
// times, sizes, counts and rates (*_us, *_ms, *_bytes, *_count,
// *_per_step, *_per_ms) are not negative.
func paramInRange(name string, v any) error {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	switch {
	case name == "impact" || strings.HasSuffix(name, "_ratio") || strings.HasSuffix(name, "_share"):
		if f < 0 || f > 1 {
			return fmt.Errorf("%v is out of range (want 0..1)", f)
		}
	case hasAnySuffix(name, "_us", "_ms", "_bytes", "_count", "_per_step", "_per_ms"):
		if f < 0 {
			return fmt.Errorf("%v is out of range (want 0 or more)", f)
		}
	}
	return nil
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

func paramKind(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case bool:
		return "bool"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
