package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Rego rules
//
// Files whose package is stepdoctor.lib (or below) are helper libraries,
// not rules; the built-in pack ships data.stepdoctor.lib with fixed(x, n)
// and pct(ratio), because OPA's sprintf prints integral numbers as
// integers ("%.1f" of 12 is "%!f(int64=12)").
//
// A Rego rule is one file holding one package under stepdoctor.rules
// (package stepdoctor.rules.<name>, <name> in snake_case) written in OPA v1
// syntax. A "# METADATA" block before the package line carries the rule:
//
//	# METADATA
//	# title: DataLoader is on the critical path
//	# description: |
//	#   Markdown doc ...
//	# custom:
//	#   id: dataloader-bound
//	#   severity: medium
//	#   category: input-pipeline
//	#   requires: [dataloader_time_ratio]
//	#   references: [https://...]
//	#   examples: dataloader          # optional Facts.Examples key
//	#   suppressed_by: [other-rule]   # optional
//	#   confidence: likely            # optional default, else confirmed
//	#   params:                       # optional thresholds, overridable
//	#     min_ratio: 0.05
//	#   trace: {...}                  # script rules: the link to the trace (link.go)
//	package stepdoctor.rules.dataloader_bound
//
// input is the Facts JSON (without examples), type-checked against the
// Facts schema at load, so a misspelled fact is a load error. The rule's
// params are data.stepdoctor.params["<id>"]. The rule yields findings as
//
//	finding contains {"msg": ..., "impact": ..., "evidence": [...]} if { ... }
//
// with keys msg (string, required), impact (number 0..1, required),
// confidence, severity (lowers the rule's; a higher one is capped at the
// rule's), evidence ([{name, value,
// unit}]; omitted: the numeric required facts). Other keys are errors.

var pkgNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// customKeys are the keys allowed under custom: in a rule's METADATA.
var customKeys = []string{"id", "severity", "category", "requires", "references", "examples", "suppressed_by", "confidence", "params", "trace"}

// sandboxRemoved lists the Rego built-ins a rule may not call: anything
// that reaches the network, reads the clock, draws randomness or exposes
// the runtime. Every built-in OPA marks non-deterministic is removed too.
var sandboxRemoved = []string{
	"http.send", "net.lookup_ip_addr", "opa.runtime", "time.now_ns", "rand.intn",
	"uuid.rfc4122", "trace", "io.jwt.decode_verify", "io.jwt.encode_sign",
	"io.jwt.encode_sign_raw", "json.match_schema", "json.verify_schema",
	"crypto.x509.parse_and_verify_certificates",
	"crypto.x509.parse_and_verify_certificates_with_options", "providers.aws.sign_req",
}

// SandboxCapabilities returns the OPA capabilities rules compile against:
// this OPA version's built-ins minus network (http.send, net.*), clock
// (time.now_ns), randomness (rand.*, uuid.rfc4122), runtime (opa.runtime),
// trace, and every built-in OPA marks non-deterministic; no host may be
// contacted (allow_net is empty).
func SandboxCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return b.Nondeterministic || sandboxed(b.Name)
	})
	caps.AllowNet = []string{}
	return caps
}

func sandboxed(name string) bool {
	return slices.Contains(sandboxRemoved, name) ||
		strings.HasPrefix(name, "net.") || strings.HasPrefix(name, "rand.") ||
		strings.HasPrefix(name, "http.")
}

type regoModule struct {
	src    source
	module *ast.Module
	id     string
	query  string
}

type regoEval struct{}

type regoCompiled struct {
	compiler *ast.Compiler
	caps     *ast.Capabilities
	modules  []*regoModule
}

type preparedQuery struct {
	pq rego.PreparedEvalQuery
}

func parseRego(src source) (*regoModule, *entry, error) {
	m, err := ast.ParseModuleWithOpts(src.path, string(src.data), ast.ParserOptions{
		ProcessAnnotation: true,
		RegoVersion:       ast.RegoV1,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("parse rule file %s: %w", src.path, err)
	}
	at := func() string {
		return fmt.Sprintf("%s:%d", src.path, m.Package.Location.Row)
	}
	p := m.Package.Path
	if len(p) >= 3 && p[1].Equal(ast.StringTerm("stepdoctor")) && p[2].Equal(ast.StringTerm("lib")) {
		return &regoModule{src: src, module: m}, nil, nil // a helper library, not a rule
	}
	if len(p) != 4 || !p[1].Equal(ast.StringTerm("stepdoctor")) || !p[2].Equal(ast.StringTerm("rules")) {
		return nil, nil, fmt.Errorf("load rule file %s: package %s is not stepdoctor.rules.<name>", at(), strings.TrimPrefix(p.String(), "data."))
	}
	name, ok := p[3].Value.(ast.String)
	if !ok || !pkgNamePattern.MatchString(string(name)) {
		return nil, nil, fmt.Errorf("load rule file %s: package name %s is not snake_case", at(), p[3])
	}
	var meta *ast.Annotations
	for _, a := range m.Annotations {
		if a.Scope == "package" {
			meta = a
		}
	}
	if meta == nil {
		return nil, nil, fmt.Errorf("load rule file %s: no # METADATA block before the package line", at())
	}
	line := m.Package.Location.Row
	if meta.Location != nil {
		line = meta.Location.Row
	}
	r := Rule{
		Title:  meta.Title,
		Doc:    meta.Description,
		Source: fmt.Sprintf("%s:%d", src.path, line),
		Kind:   "rego",
	}
	e := &entry{eval: regoEval{}}
	var errs []error
	for k := range meta.Custom {
		if !slices.Contains(customKeys, k) {
			errs = append(errs, fmt.Errorf("unknown custom field %q (allowed: %s)", k, strings.Join(customKeys, ", ")))
		}
	}
	str := func(k string) string {
		v, ok := meta.Custom[k]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("custom field %s: want a string, got %v", k, v))
		}
		return s
	}
	list := func(k string) []string {
		v, ok := meta.Custom[k]
		if !ok || v == nil {
			return nil
		}
		xs, ok := v.([]any)
		if !ok {
			errs = append(errs, fmt.Errorf("custom field %s: want a list of strings, got %v", k, v))
			return nil
		}
		out := make([]string, 0, len(xs))
		for _, x := range xs {
			s, ok := x.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("custom field %s: want a list of strings, got element %v", k, x))
				continue
			}
			out = append(out, s)
		}
		return out
	}
	r.ID = str("id")
	r.Severity = Severity(str("severity"))
	r.Category = str("category")
	r.Requires = list("requires")
	r.References = list("references")
	r.Examples = str("examples")
	r.SuppressedBy = list("suppressed_by")
	e.confidence = Confidence(str("confidence"))
	if e.confidence != "" && !validConfidence(e.confidence) {
		errs = append(errs, fmt.Errorf("confidence %q is not confirmed or likely", e.confidence))
	}
	r.Params = map[string]any{}
	if v, ok := meta.Custom["params"]; ok && v != nil {
		pm, ok := v.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("custom field params: want a mapping, got %v", v))
		} else if np, err := normalizeParams(pm); err != nil {
			errs = append(errs, err)
		} else {
			r.Params = np
		}
	}
	if v, ok := meta.Custom["trace"]; ok && v != nil {
		l, err := parseTraceLink(v)
		if err != nil {
			errs = append(errs, err)
		}
		e.link = l
	}
	if err := validateRule(&r); err != nil {
		errs = append(errs, err)
	}
	if r.Category == CategoryScript {
		annotateScriptInput(meta)
	}
	if !hasFindingRule(m) {
		errs = append(errs, errors.New("no `finding contains f if { ... }` rule"))
	}
	id := r.ID
	if id == "" {
		id = "<no id>"
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("load rule %s (%s): %w", id, r.Source, errors.Join(errs...))
	}
	e.rule = r
	return &regoModule{src: src, module: m, id: r.ID, query: p.String() + ".finding"}, e, nil
}

func hasFindingRule(m *ast.Module) bool {
	for _, r := range m.Rules {
		ref := r.Head.Ref()
		if len(ref) == 1 && ref[0].Equal(ast.VarTerm("finding")) && r.Head.RuleKind() == ast.MultiValue {
			return true
		}
	}
	return false
}

// compileRego compiles every Rego rule together once, in the sandbox and
// with input typed as Facts, its sized built-ins bounded (boundRego).
func compileRego(mods []*regoModule) (*regoCompiled, error) {
	boundRego()
	caps := SandboxCapabilities()
	schemas := ast.NewSchemaSet()
	schemas.Put(ast.SchemaRootRef, factsSchema())
	schemas.Put(scriptSchemaRef, scriptSchema())
	c := ast.NewCompiler().
		WithCapabilities(caps).
		WithSchemas(schemas).
		WithUseTypeCheckAnnotations(true).
		WithEnablePrintStatements(false)
	byFile := map[string]*ast.Module{}
	for _, m := range mods {
		byFile[m.src.path] = m.module
	}
	c.Compile(byFile)
	if c.Failed() {
		var errs []error
		for _, e := range c.Errors {
			msg := e.Code + ": " + e.Message
			if e.Details != nil {
				for _, l := range e.Details.Lines() {
					if strings.HasPrefix(strings.TrimSpace(l), "want") || strings.HasPrefix(strings.TrimSpace(l), "have") {
						msg += "; " + strings.TrimSpace(l)
					}
				}
			}
			if _, fn, ok := strings.Cut(msg, "undefined function "); ok {
				if fn, _, _ = strings.Cut(fn, " "); sandboxed(strings.TrimSuffix(fn, ";")) {
					msg += " (not allowed in the rule sandbox: rules get no network, clock or randomness)"
				}
			}
			errs = append(errs, fmt.Errorf("compile rule %s: %s", ruleAt(mods, e.Location), msg))
		}
		return nil, errors.Join(errs...)
	}
	return &regoCompiled{compiler: c, caps: caps, modules: mods}, nil
}

func ruleAt(mods []*regoModule, loc *ast.Location) string {
	if loc == nil {
		return "<unknown>"
	}
	for _, m := range mods {
		if m.src.path == loc.File && m.id != "" {
			return fmt.Sprintf("%s (%s:%d)", m.id, loc.File, loc.Row)
		}
	}
	return fmt.Sprintf("library (%s:%d)", loc.File, loc.Row)
}

// prepareRego prepares one query per enabled Rego rule against a store
// holding the effective params.
func (s *Set) prepareRego() error {
	params := map[string]any{}
	for _, e := range s.entries {
		if e.rule.Kind == "rego" {
			params[e.rule.ID] = e.rule.Params
		}
	}
	store := inmem.NewFromObject(map[string]any{"stepdoctor": map[string]any{"params": params}})
	s.regoq = map[string]*preparedQuery{}
	for _, m := range s.regoc.modules {
		if _, ok := params[m.id]; !ok {
			continue // disabled
		}
		pq, err := rego.New(
			rego.Query(m.query),
			rego.Compiler(s.regoc.compiler),
			rego.Store(store),
			rego.Capabilities(s.regoc.caps),
			rego.StrictBuiltinErrors(true),
		).PrepareForEval(context.Background())
		if err != nil {
			return fmt.Errorf("prepare rule %s (%s): %w", m.id, m.src.path, err)
		}
		s.regoq[m.id] = &preparedQuery{pq: pq}
	}
	return nil
}

var findingKeys = []string{"msg", "impact", "confidence", "severity", "evidence", "location", "fix"}

func (regoEval) evaluate(ctx context.Context, s *Set, e *entry, in *evalInput) ([]rawFinding, error) {
	q := s.regoq[e.rule.ID]
	if q == nil {
		return nil, errors.New("rule has no prepared query")
	}
	v, err := in.regoValue()
	if err != nil {
		return nil, err
	}
	rs, err := q.pq.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, nil
	}
	set, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		return nil, fmt.Errorf("finding is %T, want a set", rs[0].Expressions[0].Value)
	}
	var out []rawFinding
	for _, x := range set {
		raw, err := decodeRegoFinding(x)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func decodeRegoFinding(x any) (rawFinding, error) {
	var raw rawFinding
	obj, ok := x.(map[string]any)
	if !ok {
		return raw, fmt.Errorf("finding %v is not an object", x)
	}
	for k := range obj {
		if !slices.Contains(findingKeys, k) {
			return raw, fmt.Errorf("finding has unknown key %q (allowed: %s)", k, strings.Join(findingKeys, ", "))
		}
	}
	msg, ok := obj["msg"].(string)
	if !ok {
		return raw, fmt.Errorf("finding msg is %T, want a string", obj["msg"])
	}
	raw.msg = msg
	imp, err := regoNumber(obj["impact"])
	if err != nil {
		return raw, fmt.Errorf("finding impact %w", err)
	}
	raw.impact = imp
	if c, ok := obj["confidence"]; ok {
		cs, ok := c.(string)
		if !ok {
			return raw, fmt.Errorf("finding confidence is %T, want a string", c)
		}
		raw.confidence = Confidence(cs)
	}
	if sv, ok := obj["severity"]; ok {
		ss, ok := sv.(string)
		if !ok {
			return raw, fmt.Errorf("finding severity is %T, want a string", sv)
		}
		raw.severity = Severity(ss)
	}
	if fv, ok := obj["fix"]; ok {
		fs, ok := fv.(string)
		if !ok {
			return raw, fmt.Errorf("finding fix is %T, want a string (a variant name)", fv)
		}
		raw.fix = fs
	}
	if lv, ok := obj["location"]; ok {
		loc, err := decodeLocation(lv)
		if err != nil {
			return raw, err
		}
		raw.loc = loc
	}
	if ev, ok := obj["evidence"]; ok {
		raw.hasEvid = true
		xs, ok := ev.([]any)
		if !ok {
			return raw, fmt.Errorf("finding evidence is %T, want an array", ev)
		}
		for _, x := range xs {
			eo, ok := x.(map[string]any)
			if !ok {
				return raw, fmt.Errorf("finding evidence item %v is not an object", x)
			}
			name, _ := eo["name"].(string)
			unit, _ := eo["unit"].(string)
			if v, has := eo["value"]; has && v == nil {
				continue // a fact not measured (null) is left out, not shown as 0
			}
			val, err := regoNumber(eo["value"])
			if err != nil {
				return raw, fmt.Errorf("finding evidence %q value %w", name, err)
			}
			raw.evidence = append(raw.evidence, Evidence{Name: name, Value: val, Unit: unit})
		}
	}
	return raw, nil
}

// regoNumber converts a number a Rego rule yielded; Rego numbers are
// arbitrary precision, so one can lie beyond float64 (1e400). The error
// reads after "finding impact ".
func regoNumber(v any) (float64, error) {
	f, ok := asFloat(v)
	if ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, nil
	}
	if n, isNum := v.(json.Number); isNum {
		return 0, fmt.Errorf("%s is not a finite number (beyond float64 range)", n)
	}
	return 0, fmt.Errorf("is %T, want a number", v)
}

// factsSchema is a JSON schema of the Facts JSON (examples excluded) for
// the Rego type checker: a reference to a fact that does not exist fails
// to compile.
func factsSchema() any {
	s := schemaOf(reflect.TypeOf(facts.Facts{}))
	// Round-trip through JSON so the schema holds only plain JSON values.
	b, _ := json.Marshal(s)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func schemaOf(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		inner := schemaOf(t.Elem())
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Tag.Get("expr") == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
				// Embedded struct: encoding/json flattens its fields.
				for k, v := range schemaOf(f.Type)["properties"].(map[string]any) {
					props[k] = v
				}
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			props[name] = schemaOf(f.Type)
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	}
	return map[string]any{}
}
