package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/script"
)

// Script rules
//
// A rule of category "script" evaluates the facts that engine/script
// extracts from a Python training script (script.Facts, as JSON: input.calls,
// input.loops, input.dataloaders, input.optimizers, input.profilers,
// input.features, input.ignores, ...) instead of trace facts. Script rules
// are Rego only; input is type-checked against the script.Facts schema, so
// a misspelled field is a load error, and requires names top-level
// script.Facts fields (ScriptFactNames). Besides msg and impact, a finding
// should carry its source position:
//
//	finding contains {"msg": ..., "impact": 0.0, "location": {"line": c.line, "column": c.column}} if { ... }
//
// location holds line and column (1-based; required), end_line and
// end_column (optional); the file is the script's. impact of a script
// finding is the rule's static estimate of the recoverable share of step
// time (most are small: the script alone cannot measure anything); joined
// with a trace (engine.JoinScript) a finding backed by the trace gets the
// measured share.
//
// Evaluate runs trace rules only; EvaluateScript runs script rules only.

// CategoryScript is the category of rules that evaluate script facts.
const CategoryScript = "script"

// Location is a finding's position in a source file: Line and Column are
// 1-based (Column in Unicode code points); EndLine / EndColumn are 0 when
// unknown.
type Location struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line,omitempty"`
	EndColumn int    `json:"end_column,omitempty"`
}

// scriptSchemaRef is where the script facts schema sits in the compiler's
// schema set; script rule packages get a `schemas: [input: schema.<it>]`
// annotation so their input type-checks against it.
var scriptSchemaRef = ast.MustParseRef("schema.stepdoctor_script")

var scriptSchema = sync.OnceValue(func() any {
	s := schemaOf(reflect.TypeOf(script.Facts{}))
	b, _ := json.Marshal(s)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
})

// annotateScriptInput makes a script rule's package type-check input as
// script.Facts instead of trace facts.
func annotateScriptInput(meta *ast.Annotations) {
	meta.Schemas = append(meta.Schemas, &ast.SchemaAnnotation{Path: ast.InputRootRef.Copy(), Schema: scriptSchemaRef.Copy()})
}

var scriptFactNames = sync.OnceValue(func() []string {
	var out []string
	t := reflect.TypeOf(script.Facts{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
})

// ScriptFactNames lists the script fact names (json tags of script.Facts)
// a script rule may list in requires, sorted.
func ScriptFactNames() []string { return append([]string(nil), scriptFactNames()...) }

// newScriptInput is the evaluator input for script facts: their JSON (with
// numbers as json.Number) and empty trace facts.
func newScriptInput(sf *script.Facts) (*evalInput, error) {
	b, err := json.Marshal(sf)
	if err != nil {
		return nil, fmt.Errorf("encode script facts of %s: %w", sf.File, err)
	}
	m := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode script facts of %s: %w", sf.File, err)
	}
	return &evalInput{facts: &facts.Facts{SchemaVersion: facts.SchemaVersion}, json: m}, nil
}

// EvaluateScript runs every enabled script rule (category "script") on the
// facts of one script. Findings carry Location (File = sf.File) and come
// back sorted by line, column, then rule id; everything else is as for
// Evaluate (requires, suppressed_by, timeouts, errors joined).
func (s *Set) EvaluateScript(ctx context.Context, sf *script.Facts) ([]Finding, []NotEvaluated, error) {
	if sf == nil {
		return nil, nil, errors.New("evaluate script rules: nil script facts")
	}
	in, err := newScriptInput(sf)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate script rules: %w", err)
	}
	findings, notEval, errs, err := s.run(ctx, in, target{
		script: true, verb: "evaluate script rules", on: " on " + sf.File,
		hint: func(missing []string) string { return "the script facts lack " + strings.Join(missing, ", ") },
		check: func(raw *rawFinding) error {
			if raw.loc == nil || raw.loc.Line < 1 || raw.loc.Column < 1 {
				return fmt.Errorf("script finding %q has no location with line and column >= 1", raw.msg)
			}
			return nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range findings {
		findings[i].Location.File = sf.File
	}
	SortByLocation(findings)
	return findings, notEval, errors.Join(errs...)
}

// SortByLocation sorts findings in place by file, line, column, rule id,
// then message; findings without a location come first.
func SortByLocation(fs []Finding) {
	key := func(f Finding) Location {
		if f.Location == nil {
			return Location{}
		}
		return *f.Location
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := key(fs[i]), key(fs[j])
		switch {
		case a.File != b.File:
			return a.File < b.File
		case a.Line != b.Line:
			return a.Line < b.Line
		case a.Column != b.Column:
			return a.Column < b.Column
		case fs[i].Rule != fs[j].Rule:
			return fs[i].Rule < fs[j].Rule
		}
		return fs[i].Message < fs[j].Message
	})
}

// decodeLocation reads a Rego finding's location object.
func decodeLocation(v any) (*Location, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("finding location is %T, want an object", v)
	}
	loc := &Location{}
	for k, x := range obj {
		f, ok := asFloat(x)
		if !ok || f != math.Trunc(f) || f < 0 {
			return nil, fmt.Errorf("finding location %s is %v, want a non-negative integer", k, x)
		}
		switch k {
		case "line":
			loc.Line = int(f)
		case "column":
			loc.Column = int(f)
		case "end_line":
			loc.EndLine = int(f)
		case "end_column":
			loc.EndColumn = int(f)
		default:
			return nil, fmt.Errorf("finding location has unknown key %q (allowed: line, column, end_line, end_column)", k)
		}
	}
	return loc, nil
}

// validateScriptRequires checks a script rule's requires against the
// script facts and that it is a Rego rule.
func validateScriptRequires(r *Rule) []error {
	var errs []error
	if r.Kind != "rego" {
		errs = append(errs, fmt.Errorf("category script: %s rules cannot evaluate script facts (write the rule in Rego)", r.Kind))
	}
	names := scriptFactNames()
	for _, name := range r.Requires {
		if i := sort.SearchStrings(names, name); i >= len(names) || names[i] != name {
			errs = append(errs, fmt.Errorf("requires %q: no such script fact (see ScriptFactNames)", name))
		}
	}
	return errs
}
