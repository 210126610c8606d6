package rules

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// expr rules
//
// A YAML file holds one rule, or several as YAML documents separated by
// "---". Fields:
//
//	id, title, severity, category, requires, doc, references  (as for every rule)
//	examples       optional Facts.Examples key
//	suppressed_by  optional rule ids
//	confidence     optional: confirmed (default) or likely
//	params         optional thresholds: name -> number, bool or string
//	when           expr, bool: the rule fires when true
//	impact         expr, number in 0..1
//	message        text with {{ expr }} placeholders
//	evidence       optional list of {name, value (expr, number), unit};
//	               omitted: the numeric required facts
//	fix            optional expr, string: the variant of the doc's code
//	               change that fits the trace (a fenced block
//	               "```python variant=NAME"); "" for the default block
//
// Expressions see every fact by its json name (facts.Facts fields; pointer
// facts are auto-dereferenced) and params.<name>. They are compiled once at
// load, so a misspelled fact or param is a load error. A nullable fact
// (a pointer in Facts) used outside `x ?? default`, `x == ...` or
// `x != ...` must be listed in requires, so the rule never sees it null.
//
// Placeholders render numbers with up to 3 decimals (integers without),
// nil as "n/a". Helper functions: pct(x) renders a ratio as a percentage
// with one decimal ("24.4%"); fixed(x, n) renders x with n decimals;
// sprintf(format, args...) is Go's fmt.Sprintf. The clock built-in now()
// is not available (rules are deterministic).

var exprKeys = []string{"id", "title", "severity", "category", "requires", "doc", "references",
	"examples", "suppressed_by", "confidence", "params", "when", "impact", "message", "evidence", "fix"}

var paramNamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

type exprRuleYAML struct {
	ID           string         `yaml:"id"`
	Title        string         `yaml:"title"`
	Severity     string         `yaml:"severity"`
	Category     string         `yaml:"category"`
	Requires     []string       `yaml:"requires"`
	Doc          string         `yaml:"doc"`
	References   []string       `yaml:"references"`
	Examples     string         `yaml:"examples"`
	SuppressedBy []string       `yaml:"suppressed_by"`
	Confidence   string         `yaml:"confidence"`
	Params       map[string]any `yaml:"params"`
	When         string         `yaml:"when"`
	Impact       string         `yaml:"impact"`
	Message      string         `yaml:"message"`
	Fix          string         `yaml:"fix"`
	Evidence     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
		Unit  string `yaml:"unit"`
	} `yaml:"evidence"`
}

type exprEvidence struct {
	name, unit string
	value      *vm.Program
}

type msgPart struct {
	lit  string
	prog *vm.Program // nil for a literal
}

type exprEval struct {
	envType    reflect.Type
	factFields []int    // Facts field index for env fields 0..n-1
	paramNames []string // env params struct fields, in order
	when       *vm.Program
	impact     *vm.Program
	message    []msgPart
	evidence   []exprEvidence
	fix        *vm.Program // nil: the default variant
}

func parseExprFile(src source) ([]*entry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src.data))
	var out []*entry
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse rule file %s: %w", src.path, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		e, err := parseExprRule(src, doc.Content[0])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("load rule file %s: no rule in file", src.path)
	}
	return out, nil
}

func parseExprRule(src source, n *yaml.Node) (*entry, error) {
	at := fmt.Sprintf("%s:%d", src.path, n.Line)
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("load rule file %s: a rule must be a mapping", at)
	}
	keys := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = true
	}
	if keys["rule"] && keys["cases"] && !keys["id"] {
		return nil, fmt.Errorf("load rule file %s: this is a case file (rule, cases), not a rule: move it to the cases/ folder of the rule directory", at)
	}
	var y exprRuleYAML
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(exprKeys, k.Value) {
			errs = append(errs, fmt.Errorf("line %d: unknown field %q (allowed: %s)", k.Line, k.Value, strings.Join(exprKeys, ", ")))
		}
	}
	if err := n.Decode(&y); err != nil {
		errs = append(errs, err)
	}
	id := y.ID
	if id == "" {
		id = "<no id>"
	}
	fail := func(errs []error) error {
		return fmt.Errorf("load rule %s (%s): %w", id, at, errors.Join(errs...))
	}
	if len(errs) > 0 {
		return nil, fail(errs)
	}
	r := Rule{
		ID: y.ID, Title: y.Title, Severity: Severity(y.Severity), Category: y.Category,
		Requires: y.Requires, Doc: y.Doc, References: y.References, Source: at, Kind: "expr",
		Examples: y.Examples, SuppressedBy: y.SuppressedBy,
	}
	e := &entry{confidence: Confidence(y.Confidence)}
	if e.confidence != "" && !validConfidence(e.confidence) {
		errs = append(errs, fmt.Errorf("confidence %q is not confirmed or likely", e.confidence))
	}
	params, err := normalizeParams(y.Params)
	if err != nil {
		errs = append(errs, err)
	}
	r.Params = params
	if err := validateRule(&r); err != nil {
		errs = append(errs, err)
	}
	for _, f := range []struct{ name, v string }{{"when", y.When}, {"impact", y.Impact}, {"message", y.Message}} {
		if strings.TrimSpace(f.v) == "" {
			errs = append(errs, fmt.Errorf("missing field %s", f.name))
		}
	}
	if len(errs) > 0 {
		return nil, fail(errs)
	}
	ev, err := compileExprRule(&r, &y)
	if err != nil {
		return nil, fail([]error{err})
	}
	e.rule = r
	e.eval = ev
	return e, nil
}

func compileExprRule(r *Rule, y *exprRuleYAML) (*exprEval, error) {
	ev := &exprEval{}
	ft := reflect.TypeOf(facts.Facts{})
	var fields []reflect.StructField
	for i := 0; i < ft.NumField(); i++ {
		f := ft.Field(i)
		if f.Tag.Get("expr") == "-" {
			continue
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		ev.factFields = append(ev.factFields, i)
	}
	var pfields []reflect.StructField
	for _, name := range sortedKeys(r.Params) {
		if !paramNamePattern.MatchString(name) {
			return nil, fmt.Errorf("param %q: name is not snake_case", name)
		}
		var t reflect.Type
		switch r.Params[name].(type) {
		case float64:
			t = reflect.TypeOf(float64(0))
		case bool:
			t = reflect.TypeOf(false)
		case string:
			t = reflect.TypeOf("")
		default:
			return nil, fmt.Errorf("param %s: expr rules take number, bool or string params, got %s", name, paramKind(r.Params[name]))
		}
		pfields = append(pfields, reflect.StructField{
			Name: fmt.Sprintf("P%d", len(pfields)), Type: t, Tag: reflect.StructTag(fmt.Sprintf(`expr:%q`, name)),
		})
		ev.paramNames = append(ev.paramNames, name)
	}
	fields = append(fields, reflect.StructField{
		Name: "StepdoctorParams", Type: reflect.StructOf(pfields), Tag: `expr:"params"`,
	}, reflect.StructField{
		Name: "StepdoctorRun", Type: reflect.TypeOf((*exprRun)(nil)), Tag: reflect.StructTag(fmt.Sprintf(`expr:%q`, exprRunName)),
	})
	ev.envType = reflect.StructOf(fields)
	env := reflect.New(ev.envType).Elem().Interface()

	var err error
	// compileChecked compiles src; nullsChecked rejects nullable facts
	// not in requires (checkNullable).
	compileChecked := func(what, src string, nullsChecked bool, opts ...expr.Option) (*vm.Program, error) {
		if nullsChecked {
			if err := checkNullable(src, r.Requires); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		if tree, err := parser.Parse(src); err == nil {
			if err := checkReserved(tree.Node); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		p, err := expr.Compile(src, append(exprOptions(env), opts...)...)
		if err != nil {
			return nil, fmt.Errorf("compile %s %q: %w", what, src, err)
		}
		return p, nil
	}
	compile := func(what, src string, opts ...expr.Option) (*vm.Program, error) {
		return compileChecked(what, src, true, opts...)
	}
	if ev.when, err = compile("when", y.When, expr.AsBool()); err != nil {
		return nil, err
	}
	if ev.impact, err = compile("impact", y.Impact); err != nil {
		return nil, err
	}
	if err := wantNumber(ev.impact); err != nil {
		return nil, fmt.Errorf("impact %q: %w", y.Impact, err)
	}
	parts, err := splitTemplate(y.Message)
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	for _, p := range parts {
		if !p.code {
			ev.message = append(ev.message, msgPart{lit: p.text})
			continue
		}
		prog, err := compile("message placeholder", p.text)
		if err != nil {
			return nil, err
		}
		ev.message = append(ev.message, msgPart{prog: prog})
	}
	if strings.TrimSpace(y.Fix) != "" {
		if ev.fix, err = compile("fix", y.Fix, expr.AsKind(reflect.String)); err != nil {
			return nil, err
		}
	}
	for _, e := range y.Evidence {
		if e.Name == "" || e.Value == "" {
			return nil, errors.New("evidence: each item needs name and value")
		}
		// A bare fact may be null: the item is then left out (Evidence).
		prog, err := compileChecked("evidence "+e.Name, e.Value, !bareFact(e.Value))
		if err != nil {
			return nil, err
		}
		if err := wantNumber(prog); err != nil {
			return nil, fmt.Errorf("evidence %s %q: %w", e.Name, e.Value, err)
		}
		ev.evidence = append(ev.evidence, exprEvidence{name: e.Name, unit: e.Unit, value: prog})
	}
	return ev, nil
}

func exprOptions(env any) []expr.Option {
	return append([]expr.Option{expr.Env(env)}, boundedOptions()...)
}

// bareFact reports whether src is one identifier (a fact's name alone).
func bareFact(src string) bool {
	tree, err := parser.Parse(src)
	if err != nil {
		return false
	}
	_, ok := tree.Node.(*exprast.IdentifierNode)
	return ok
}

// checkNullable rejects uses of nullable facts that are not in requires,
// unless guarded by ?? or compared with == / !=.
func checkNullable(src string, requires []string) error {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil // expr.Compile reports it with position
	}
	safe := map[*exprast.IdentifierNode]bool{}
	var idents []*exprast.IdentifierNode
	exprast.Walk(&tree.Node, visitor(func(n *exprast.Node) {
		switch x := (*n).(type) {
		case *exprast.BinaryNode:
			if x.Operator == "??" || x.Operator == "==" || x.Operator == "!=" {
				if id, ok := x.Left.(*exprast.IdentifierNode); ok {
					safe[id] = true
				}
				if id, ok := x.Right.(*exprast.IdentifierNode); ok && x.Operator != "??" {
					safe[id] = true
				}
			}
		case *exprast.IdentifierNode:
			idents = append(idents, x)
		}
	}))
	cat := factCatalogue()
	var errs []error
	seen := map[string]bool{}
	for _, id := range idents {
		fi, ok := cat[id.Value]
		if !ok || !fi.nullable || safe[id] || slices.Contains(requires, id.Value) || seen[id.Value] {
			continue
		}
		seen[id.Value] = true
		errs = append(errs, fmt.Errorf("nullable fact %s is used but not listed in requires (list it, or guard it: `%s ?? default`)", id.Value, id.Value))
	}
	return errors.Join(errs...)
}

// wantNumber rejects a program whose static result type is known and is
// not a number (or a pointer to one).
func wantNumber(p *vm.Program) error {
	t := p.Node().Type()
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return nil
	}
	return fmt.Errorf("evaluates to %s, want a number", t)
}

type visitor func(n *exprast.Node)

func (v visitor) Visit(n *exprast.Node) { v(n) }

func (x *exprEval) evaluate(ctx context.Context, s *Set, e *entry, in *evalInput) ([]rawFinding, error) {
	type result struct {
		raws []rawFinding
		err  error
	}
	run := newExprRun()
	done := make(chan result, 1)
	exprRunning.Add(1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.err = fmt.Errorf("panic: %v", p)
			}
			exprRunning.Add(-1)
			done <- res
		}()
		res.raws, res.err = x.run(e, in, run)
	}()
	select {
	case res := <-done:
		return res.raws, res.err
	case <-ctx.Done():
		// expr cannot be interrupted, but every loop iteration and every
		// bounded allocation checks run.stopped, and the budgets bound
		// the rest: wait for it, so no other rule starts beside it.
		run.stopped.Store(true)
		<-done
		return nil, ctx.Err()
	}
}

func (x *exprEval) run(e *entry, in *evalInput, run *exprRun) ([]rawFinding, error) {
	env := reflect.New(x.envType).Elem()
	fv := reflect.ValueOf(in.facts).Elem()
	for i, fi := range x.factFields {
		env.Field(i).Set(fv.Field(fi))
	}
	pv := env.Field(len(x.factFields))
	for i, name := range x.paramNames {
		pv.Field(i).Set(reflect.ValueOf(e.rule.Params[name]))
	}
	env.Field(len(x.factFields) + 1).Set(reflect.ValueOf(run))
	envv := env.Interface()
	exec := func(p *vm.Program) (any, error) {
		m := vm.VM{MemoryBudget: exprVMBudget}
		v, err := m.Run(p, envv)
		if err != nil {
			return nil, oneLine(err)
		}
		return v, nil
	}
	ok, err := exec(x.when)
	if err != nil {
		return nil, fmt.Errorf("when: %w", err)
	}
	if ok != true {
		return nil, nil
	}
	iv, err := exec(x.impact)
	if err != nil {
		return nil, fmt.Errorf("impact: %w", err)
	}
	impact, isNum := numeric(iv)
	if !isNum {
		return nil, fmt.Errorf("impact: got %T, want a number", iv)
	}
	var msg strings.Builder
	for _, p := range x.message {
		if p.prog == nil {
			msg.WriteString(p.lit)
			continue
		}
		v, err := exec(p.prog)
		if err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		msg.WriteString(formatValue(v))
	}
	raw := rawFinding{msg: msg.String(), impact: impact}
	if x.fix != nil {
		v, err := exec(x.fix)
		if err != nil {
			return nil, fmt.Errorf("fix: %w", err)
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("fix: got %T, want a string", v)
		}
		raw.fix = s
	}
	if len(x.evidence) > 0 {
		raw.hasEvid = true
		for _, ev := range x.evidence {
			v, err := exec(ev.value)
			if err != nil {
				return nil, fmt.Errorf("evidence %s: %w", ev.name, err)
			}
			if deref(v) == nil {
				continue // a fact not measured (null) is left out, not shown as 0
			}
			f, ok := numeric(v)
			if !ok {
				return nil, fmt.Errorf("evidence %s: got %T, want a number", ev.name, v)
			}
			raw.evidence = append(raw.evidence, Evidence{Name: ev.name, Value: f, Unit: ev.unit})
		}
	}
	return []rawFinding{raw}, nil
}

// oneLine keeps an expr runtime error to its first line (expr appends the
// source line and a caret), with the failing position.
func oneLine(err error) error {
	var fe *file.Error
	if errors.As(err, &fe) {
		msg := fe.Message
		if msg == "memory budget exceeded" {
			msg = fmt.Sprintf("an expr rule may build at most %d array, map and range elements in one expression", exprVMBudget)
		}
		if fe.Line > 0 {
			msg = fmt.Sprintf("%s (at %d:%d)", msg, fe.Line, fe.Column+1)
		}
		return errors.New(msg)
	}
	return errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
}

type tmplPart struct {
	text string
	code bool
}

// splitTemplate splits "a {{ x }} b" into literal and code parts.
func splitTemplate(s string) ([]tmplPart, error) {
	var out []tmplPart
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			if strings.Contains(s, "}}") {
				return nil, errors.New(`"}}" without "{{"`)
			}
			if s != "" {
				out = append(out, tmplPart{text: s})
			}
			return out, nil
		}
		if i > 0 {
			if strings.Contains(s[:i], "}}") {
				return nil, errors.New(`"}}" without "{{"`)
			}
			out = append(out, tmplPart{text: s[:i]})
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			return nil, errors.New(`unclosed "{{"`)
		}
		code := strings.TrimSpace(s[i+2 : i+2+j])
		if code == "" {
			return nil, errors.New(`empty "{{ }}"`)
		}
		out = append(out, tmplPart{text: code, code: true})
		s = s[i+2+j+2:]
	}
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil
	}
	return rv.Interface()
}

func numeric(v any) (float64, bool) {
	rv := reflect.ValueOf(deref(v))
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

// formatValue renders a placeholder value: integers plainly, other numbers
// with up to 3 decimals, nil as "n/a".
func formatValue(v any) string {
	v = deref(v)
	if v == nil {
		return "n/a"
	}
	if f, ok := numeric(v); ok {
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatFloat(f, 'f', 0, 64)
		}
		return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
