package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/script"
)

// Rule cases
//
// A case file (YAML; conventionally <dir>/cases/<rule-id>.yaml) proves a
// rule fires and stays quiet:
//
//	rule: dataloader-bound
//	cases:
//	  - name: single-process loader takes a quarter of the step
//	    facts: {has_steps: true, steps_count: 5, dataloader_time_ratio: 0.244,
//	            dataloader_single_process: true}
//	    expect: fires            # fires | quiet | not_evaluated
//	    severity: high           # optional: the finding's severity
//	    confidence: confirmed    # optional
//	    message_contains: ["24.4%", "single-process"]   # optional
//	    message_not_contains: ["pin_memory"]            # optional
//	    impact: [0.2, 0.25]      # optional: inclusive bounds
//	    fix: inference           # optional: the doc's fix variant the finding shows
//	    params: {min_ratio: 0.1} # optional: overrides for this rule
//
// A case for a script rule (category script) gives Python source instead
// of facts: script (inline) or script_file (a path relative to the case
// file's directory); at_line optionally pins the line of the finding:
//
//	rule: dataloader-num-workers
//	cases:
//	  - name: loader without workers
//	    script: |
//	      from torch.utils.data import DataLoader
//	      loader = DataLoader(ds, batch_size=64)
//	    expect: fires
//	    at_line: 2
//
// facts is a fragment of the Facts JSON laid over zero facts (every
// nullable fact null, flags false, schema_version current); unknown fact
// names are errors. The whole Set is evaluated, so suppressed_by applies:
// "quiet" means the rule was evaluated and produced no finding (or was
// suppressed).

// Expectation values of a case.
const (
	ExpectFires        = "fires"
	ExpectQuiet        = "quiet"
	ExpectNotEvaluated = "not_evaluated"
)

// CaseFile is one case file.
type CaseFile struct {
	Rule  string `yaml:"rule"`
	Cases []Case `yaml:"cases"`
}

// Case is one named fact fragment with its expected outcome.
type Case struct {
	Name            string         `yaml:"name"`
	Facts           map[string]any `yaml:"facts"`
	Expect          string         `yaml:"expect"`
	Severity        Severity       `yaml:"severity"`
	Confidence      Confidence     `yaml:"confidence"`
	MessageContains []string       `yaml:"message_contains"`
	MessageLacks    []string       `yaml:"message_not_contains"`
	Impact          []float64      `yaml:"impact"`
	Fix             string         `yaml:"fix"`
	Params          map[string]any `yaml:"params"`
	Script          string         `yaml:"script"`      // script rules: Python source
	ScriptFile      string         `yaml:"script_file"` // script rules: file relative to the case file
	AtLine          int            `yaml:"at_line"`     // script rules: expected line of the finding
	Line            int            `yaml:"-"`
	// ScriptName is the file name script findings carry (script_file as
	// resolved by RunCases; "case.py" for inline scripts).
	ScriptName string `yaml:"-"`
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Rule   string `json:"rule"`
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Got    string `json:"got"`              // fires, quiet, not_evaluated, error, or skipped (a script case in a build without the Python parser; a case file not read, with Rule "" and the reason in Detail)
	Detail string `json:"detail,omitempty"` // why it failed
}

// RunCases runs every *.yaml / *.yml case file in dir against s.
func RunCases(s *Set, dir string) ([]CaseResult, error) {
	return runCasesFS(s, os.DirFS(dir), ".", dir)
}

// RunCasesFS is RunCases on a file system (for example the embedded
// built-in pack: RunCasesFS(s, builtin.FS, "cases")).
func RunCasesFS(s *Set, fsys fs.FS, dir string) ([]CaseResult, error) {
	return runCasesFS(s, fsys, dir, dir)
}

func runCasesFS(s *Set, fsys fs.FS, dir, display string) ([]CaseResult, error) {
	des, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read cases dir %s: %w", display, err)
	}
	var out []CaseResult
	for _, de := range des {
		ext := path.Ext(de.Name())
		if de.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		file := path.Join(display, de.Name())
		if why := irregular(fsys, path.Join(dir, de.Name()), de); why != "" {
			// Named, not read: a named pipe would block the run.
			out = append(out, CaseResult{File: file, Pass: true, Got: "skipped", Detail: why})
			continue
		}
		b, err := readFSCapped(fsys, path.Join(dir, de.Name()))
		if err != nil {
			return nil, fmt.Errorf("read case file %s: %w", file, err)
		}
		cf, err := ParseCases(b)
		if err != nil {
			return nil, fmt.Errorf("parse case file %s: %w", file, err)
		}
		if _, ok := s.Rule(cf.Rule); !ok {
			return nil, fmt.Errorf("run case file %s: no enabled rule %q in the set", file, cf.Rule)
		}
		for _, c := range cf.Cases {
			if c.ScriptFile != "" {
				sp := path.Join(path.Dir(path.Join(dir, de.Name())), c.ScriptFile)
				src, err := readFSCapped(fsys, sp)
				if err != nil {
					return nil, fmt.Errorf("read script %s of case %q in %s: %w", c.ScriptFile, c.Name, file, err)
				}
				c.Script, c.ScriptName = string(src), path.Join(path.Dir(file), c.ScriptFile)
			}
			r := RunCase(s, cf.Rule, c)
			r.File = file
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseCases parses a case file, checking every case has a name, a valid
// expect and known fact names.
func ParseCases(b []byte) (*CaseFile, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var cf CaseFile
	if err := dec.Decode(&cf); err != nil {
		msg := strings.NewReplacer(" in type rules.CaseFile", " (a case file takes rule and cases)", " in type rules.Case", " (not a case key: see rules.Case)").Replace(err.Error())
		return nil, errors.New(msg)
	}
	if cf.Rule == "" {
		return nil, errors.New("missing field rule")
	}
	if len(cf.Cases) == 0 {
		return nil, errors.New("no cases")
	}
	// Line numbers of the cases, for reports.
	if len(root.Content) > 0 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "cases" {
				for j, c := range m.Content[i+1].Content {
					if j < len(cf.Cases) {
						cf.Cases[j].Line = c.Line
					}
				}
			}
		}
	}
	names := map[string]bool{}
	for i, c := range cf.Cases {
		if c.Name == "" {
			return nil, fmt.Errorf("case %d (line %d): missing name", i+1, c.Line)
		}
		if names[c.Name] {
			return nil, fmt.Errorf("case %q (line %d): duplicate name", c.Name, c.Line)
		}
		names[c.Name] = true
		switch c.Expect {
		case ExpectFires, ExpectQuiet, ExpectNotEvaluated:
		default:
			return nil, fmt.Errorf("case %q (line %d): expect %q is not fires, quiet or not_evaluated", c.Name, c.Line, c.Expect)
		}
		if len(c.Impact) != 0 && len(c.Impact) != 2 {
			return nil, fmt.Errorf("case %q (line %d): impact wants [min, max]", c.Name, c.Line)
		}
		if len(c.Impact) == 2 && c.Impact[0] > c.Impact[1] {
			return nil, fmt.Errorf("case %q (line %d): impact [%v, %v] has its min above its max", c.Name, c.Line, c.Impact[0], c.Impact[1])
		}
		if c.Severity != "" && !validSeverity(c.Severity) {
			return nil, fmt.Errorf("case %q (line %d): severity %q is not high, medium, low or info", c.Name, c.Line, c.Severity)
		}
		if c.Confidence != "" && !validConfidence(c.Confidence) {
			return nil, fmt.Errorf("case %q (line %d): confidence %q is not confirmed or likely", c.Name, c.Line, c.Confidence)
		}
		if c.AtLine < 0 {
			return nil, fmt.Errorf("case %q (line %d): at_line %d is not a line (1 or more)", c.Name, c.Line, c.AtLine)
		}
		if (c.Script != "" || c.ScriptFile != "") && len(c.Facts) > 0 {
			return nil, fmt.Errorf("case %q (line %d): give facts or a script, not both", c.Name, c.Line)
		}
		if c.Script != "" && c.ScriptFile != "" {
			return nil, fmt.Errorf("case %q (line %d): give script or script_file, not both", c.Name, c.Line)
		}
		for _, b := range c.Impact {
			if _, err := finiteParam(b); err != nil {
				return nil, fmt.Errorf("case %q (line %d): impact: %w", c.Name, c.Line, err)
			}
		}
		if _, err := normalizeParams(c.Params); err != nil {
			return nil, fmt.Errorf("case %q (line %d): %w", c.Name, c.Line, err)
		}
		if _, err := CaseFacts(c.Facts); err != nil {
			return nil, fmt.Errorf("case %q (line %d): %w", c.Name, c.Line, err)
		}
		if key := findingCheck(c); key != "" && c.Expect != ExpectFires {
			// It would pass unread: a quiet case has no finding to check.
			return nil, fmt.Errorf("case %q (line %d): %s checks a finding, and expect %s has none: expect fires, or drop %s", c.Name, c.Line, key, c.Expect, key)
		}
	}
	return &cf, nil
}

// findingCheck names the first key of c that checks a finding, "" when
// none does.
func findingCheck(c Case) string {
	for _, k := range []struct {
		key string
		set bool
	}{
		{"severity", c.Severity != ""}, {"confidence", c.Confidence != ""},
		{"message_contains", len(c.MessageContains) > 0}, {"message_not_contains", len(c.MessageLacks) > 0},
		{"impact", len(c.Impact) > 0}, {"fix", c.Fix != ""}, {"at_line", c.AtLine != 0},
	} {
		if k.set {
			return k.key
		}
	}
	return ""
}

// CaseFacts lays a Facts JSON fragment over zero facts.
func CaseFacts(fragment map[string]any) (*facts.Facts, error) {
	f := &facts.Facts{SchemaVersion: facts.SchemaVersion}
	b, err := json.Marshal(fragment)
	if err != nil {
		return nil, fmt.Errorf("encode facts fragment: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("decode facts fragment: fact %s takes %s, not a %s", te.Field, factKind(te.Type), te.Value)
		}
		return nil, fmt.Errorf("decode facts fragment: %w", err)
	}
	return f, nil
}

// factKind says what a fact's Go type takes, in a case file's words.
func factKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// RunCase evaluates one case for rule id on s.
func RunCase(s *Set, id string, c Case) CaseResult {
	res := CaseResult{Line: c.Line, Rule: id, Name: c.Name}
	fail := func(got, format string, args ...any) CaseResult {
		res.Got = got
		res.Detail = fmt.Sprintf(format, args...)
		return res
	}
	set := s
	if len(c.Params) > 0 {
		var err error
		set, err = s.reconfigure(id, c.Params)
		if err != nil {
			return fail("error", "%v", err)
		}
	}
	var (
		fs  []Finding
		ne  []NotEvaluated
		err error
	)
	r, known := set.Rule(id)
	givesScript := c.Script != "" || c.ScriptFile != ""
	switch {
	case known && r.Category == CategoryScript && len(c.Facts) > 0:
		return fail("error", "%s is a script rule: give the case a script (or script_file), not facts", id)
	case known && r.Category != CategoryScript && givesScript:
		return fail("error", "%s is a trace rule (category %s): give the case facts, not a script", id, r.Category)
	}
	if known && r.Category == CategoryScript {
		fs, ne, err = runScriptCase(set, c)
		if errors.Is(err, script.ErrNoParser) {
			// A build without cgo cannot parse the case's script.
			res.Pass, res.Got, res.Detail = true, "skipped", err.Error()
			return res
		}
	} else {
		var f *facts.Facts
		if f, err = CaseFacts(c.Facts); err != nil {
			return fail("error", "%v", err)
		}
		fs, ne, err = set.Evaluate(context.Background(), f)
	}
	if err != nil {
		return fail("error", "%v", err)
	}
	var mine []Finding
	for _, fd := range fs {
		if fd.Rule == id {
			mine = append(mine, fd)
		}
	}
	got := ExpectQuiet
	if len(mine) > 0 {
		got = ExpectFires
	}
	for _, n := range ne {
		if n.Rule == id {
			got = ExpectNotEvaluated
			if c.Expect != got {
				return fail(got, "expected %s, got not_evaluated (missing %s)", c.Expect, strings.Join(n.Missing, ", "))
			}
		}
	}
	res.Got = got
	if got != c.Expect {
		if got == ExpectFires {
			return fail(got, "expected %s, got a finding: %s", c.Expect, mine[0].Message)
		}
		return fail(got, "expected %s, got %s", c.Expect, got)
	}
	if got != ExpectFires {
		res.Pass = true
		return res
	}
	for _, fd := range mine {
		if c.Severity != "" && fd.Severity != c.Severity {
			return fail(got, "severity: expected %s, got %s", c.Severity, fd.Severity)
		}
		if c.Confidence != "" && fd.Confidence != c.Confidence {
			return fail(got, "confidence: expected %s, got %s", c.Confidence, fd.Confidence)
		}
		for _, sub := range c.MessageContains {
			if !strings.Contains(fd.Message, sub) {
				return fail(got, "message %q does not contain %q", fd.Message, sub)
			}
		}
		for _, sub := range c.MessageLacks {
			if strings.Contains(fd.Message, sub) {
				return fail(got, "message %q contains %q", fd.Message, sub)
			}
		}
		if c.Fix != "" && fd.Fix != c.Fix {
			return fail(got, "fix: expected variant %q, got %q", c.Fix, fd.Fix)
		}
		if c.AtLine > 0 && (fd.Location == nil || fd.Location.Line != c.AtLine) {
			return fail(got, "at_line: expected the finding at line %d of the case's script, got %s", c.AtLine, scriptLoc(fd.Location))
		}
		if len(c.Impact) == 2 && (fd.Impact < c.Impact[0]-1e-9 || fd.Impact > c.Impact[1]+1e-9 || math.IsNaN(fd.Impact)) {
			return fail(got, "impact %v outside [%v, %v]", fd.Impact, c.Impact[0], c.Impact[1])
		}
	}
	res.Pass = true
	return res
}

// reconfigure returns s with extra param overrides for one rule, keeping
// the rest of the set as it is (enabled rules, severities, timeout).
func (s *Set) reconfigure(id string, params map[string]any) (*Set, error) {
	cfg := Config{Timeout: s.timeout, Severity: map[string]Severity{}, Params: Params{}}
	enabled := map[string]*entry{}
	for _, e := range s.entries {
		enabled[e.rule.ID] = e
	}
	for _, e := range s.loaded {
		cur := enabled[e.rule.ID]
		if cur == nil {
			cfg.Disable = append(cfg.Disable, e.rule.ID)
			continue
		}
		if cur.sevPinned {
			cfg.Severity[e.rule.ID] = cur.rule.Severity
		}
		if len(cur.rule.Params) > 0 {
			cfg.Params[e.rule.ID] = map[string]any{}
			for k, v := range cur.rule.Params {
				cfg.Params[e.rule.ID][k] = v
			}
		}
	}
	if cfg.Params[id] == nil {
		cfg.Params[id] = map[string]any{}
	}
	for k, v := range params {
		cfg.Params[id][k] = v
	}
	return s.With(cfg)
}

// runScriptCase scans a case's script and evaluates the script rules.
func runScriptCase(s *Set, c Case) ([]Finding, []NotEvaluated, error) {
	if strings.TrimSpace(c.Script) == "" {
		return nil, nil, errors.New("script rule case gives no script or script_file")
	}
	name := c.ScriptName
	if name == "" {
		name = "case.py"
	}
	sf, err := script.Scan(name, []byte(c.Script))
	if err != nil {
		return nil, nil, err
	}
	return s.EvaluateScript(context.Background(), sf)
}

// scriptLoc places a finding in a case's script: "line 8, column 21", with
// the file named when it is a script_file (an inline script is case.py).
func scriptLoc(l *Location) string {
	if l == nil {
		return "no location"
	}
	if l.File != "" && l.File != "case.py" {
		return fmt.Sprintf("line %d, column %d of %s", l.Line, l.Column, l.File)
	}
	return fmt.Sprintf("line %d, column %d", l.Line, l.Column)
}
