package rules

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

// RunRegoTests runs the Rego tests of a rule directory the way `opa test`
// does: every rule named test_* in the directory's *_test.rego files. The
// tests see the built-in modules (data.stepdoctor.lib, the built-in rules),
// the directory's rules, and data.stepdoctor.params holding the effective
// params of s's enabled Rego rules; they compile against the rule sandbox
// (SandboxCapabilities) and each runs under s's timeout. A directory
// without *_test.rego files has no Rego tests (nil, nil).
//
// Each result is a CaseResult: File and Line locate the test, Rule is the
// test's package, Name the test rule, Got "pass", "fail" or "error".
func RunRegoTests(ctx context.Context, s *Set, dir string) ([]CaseResult, error) {
	tests, err := filepath.Glob(filepath.Join(dir, "*_test.rego"))
	if err != nil || len(tests) == 0 {
		return nil, err
	}
	modules := map[string]*ast.Module{}
	parse := func(name string, b []byte) error {
		m, err := ast.ParseModuleWithOpts(name, string(b), ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return fmt.Errorf("parse rego test module %s: %w", name, err)
		}
		modules[name] = m
		return nil
	}
	bfiles, err := fs.Glob(builtin.FS, "*.rego")
	if err != nil {
		return nil, err
	}
	for _, name := range bfiles {
		b, err := fs.ReadFile(builtin.FS, name)
		if err != nil {
			return nil, fmt.Errorf("read built-in module %s: %w", name, err)
		}
		if err := parse(path.Join("builtin", name), b); err != nil {
			return nil, err
		}
	}
	own, err := filepath.Glob(filepath.Join(dir, "*.rego"))
	if err != nil {
		return nil, err
	}
	for _, p := range own {
		if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
			continue // a named pipe would block the read forever
		}
		b, err := readFileCapped(p)
		if err != nil {
			return nil, fmt.Errorf("read rego module %s: %w", p, err)
		}
		if err := parse(filepath.ToSlash(p), b); err != nil {
			return nil, err
		}
	}
	params := map[string]any{}
	for _, e := range s.entries {
		if e.rule.Kind == "rego" {
			params[e.rule.ID] = e.rule.Params
		}
	}
	store := inmem.NewFromObject(map[string]any{"stepdoctor": map[string]any{"params": params}})
	ch, err := tester.NewRunner().
		SetCompiler(ast.NewCompiler().WithCapabilities(SandboxCapabilities())).
		SetStore(store).
		SetTimeout(s.timeout).
		RaiseBuiltinErrors(true).
		SetModules(modules).
		RunTests(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("run rego tests in %s: %w", dir, err)
	}
	var out []CaseResult
	for r := range ch {
		res := CaseResult{Rule: strings.TrimPrefix(r.Package, "data."), Name: r.Name, Pass: r.Pass(), Got: "pass"}
		if r.Location != nil {
			res.File, res.Line = r.Location.File, r.Location.Row
		}
		switch {
		case r.Error != nil:
			res.Got, res.Detail = "error", r.Error.Error()
		case r.Fail:
			res.Got, res.Detail = "fail", "test rule is false or undefined"
		case r.Skip:
			res.Got, res.Pass = "skip", true
		}
		out = append(out, res)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}
