package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/rules"
)

// LintSchemaVersion versions the JSON shape of LintResult.
const LintSchemaVersion = 1

// LintOptions configures Lint.
type LintOptions struct {
	// Paths are Python files, or directories searched recursively for
	// *.py (hidden directories, __pycache__, venv, .venv, node_modules and
	// site-packages are skipped).
	Paths []string
	// Rules is the rule set (its script rules are evaluated); nil means
	// the built-in pack.
	Rules *rules.Set
	// Root is the directory SARIF paths are made relative to; "" means the
	// repository root (the nearest directory above the working directory
	// holding .git), else the working directory.
	Root string
}

// LintResult is the outcome of linting scripts: one ScriptResult per file
// in path order, plus the script rules that were evaluated.
type LintResult struct {
	SchemaVersion int             `json:"schema_version"`
	Root          string          `json:"-"` // absolute; RelPath is relative to it
	Rules         []rules.Rule    `json:"rules"`
	Scripts       []*ScriptResult `json:"scripts"`
	// Skipped are the files given by name that were not linted because
	// they are not Python (a .txt, a binary): listed, never an error
	// unless nothing was left to lint.
	Skipped []SkippedFile `json:"skipped"`
	// About says what made the report (set by the CLI; nil in tests).
	About *About `json:"-"`
}

// SkippedFile is a path Lint did not scan, and why.
type SkippedFile struct {
	Path    string `json:"path"`
	RelPath string `json:"rel_path"`
	Reason  string `json:"reason"`
}

// ScriptResult is what the script rules found in one file.
type ScriptResult struct {
	Path    string `json:"path"`     // as found (given path or below a given directory)
	RelPath string `json:"rel_path"` // slash-separated, relative to LintResult.Root when inside it
	// Findings are sorted by line, column and rule id; each carries
	// Location.File = Path.
	Findings []rules.Finding `json:"findings"`
	// Suppressed are findings silenced by `# stepdoctor: ignore[rule-id]
	// reason` comments, with the reason.
	Suppressed   []Suppressed         `json:"suppressed"`
	NotEvaluated []rules.NotEvaluated `json:"not_evaluated"`
	// Diagnostics are syntax errors: the facts inside those regions are
	// missing, the rest of the file was still checked.
	Diagnostics []script.Diagnostic `json:"diagnostics"`
	// Partial is true when syntax errors left parts of the file
	// unchecked (see Diagnostics): no findings there does not mean clean.
	Partial bool `json:"partial"`
	// RuleErrors has one line per rule that failed or timed out on this
	// script ("evaluate rule ID (SOURCE) on FILE: why"); the other rules'
	// findings stand.
	RuleErrors []string      `json:"rule_errors,omitempty"`
	Facts      *script.Facts `json:"-"`
}

// Suppressed is a finding silenced by an ignore comment.
type Suppressed struct {
	rules.Finding
	Reason     string `json:"reason"`      // text after ignore[...], may be ""
	IgnoreLine int    `json:"ignore_line"` // line of the comment
}

// Lint scans every script and evaluates the script rules on it. Unreadable
// paths are an *InputError; syntax errors are Diagnostics, and rules that
// fail or time out are ScriptResult.RuleErrors, not errors.
func Lint(ctx context.Context, opts LintOptions) (*LintResult, error) {
	if !script.Available {
		return nil, &InputError{script.ErrNoParser}
	}
	files, skipped, err := expandScripts(opts.Paths)
	if err != nil {
		return nil, &InputError{err}
	}
	set := opts.Rules
	if set == nil {
		if set, err = rules.Builtin(); err != nil {
			return nil, fmt.Errorf("load built-in rules: %w", err)
		}
	}
	root := opts.Root
	if root == "" {
		root = repoRoot()
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	res := &LintResult{SchemaVersion: LintSchemaVersion, Root: root, Scripts: []*ScriptResult{}, Rules: []rules.Rule{}, Skipped: []SkippedFile{}}
	for _, sk := range skipped {
		sk.RelPath = relTo(root, sk.Path)
		res.Skipped = append(res.Skipped, sk)
	}
	for _, r := range set.Rules() {
		if r.Category == rules.CategoryScript {
			res.Rules = append(res.Rules, r)
		}
	}
	var errs []error
	for _, f := range files {
		sr, err := LintFile(ctx, f, set)
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return nil, err
			}
			errs = append(errs, err)
			continue
		}
		sr.RelPath = relTo(root, f)
		res.Scripts = append(res.Scripts, sr)
	}
	return res, errors.Join(errs...)
}

// LintFile scans one script and evaluates the script rules of set on it,
// applying ignore comments.
func LintFile(ctx context.Context, path string, set *rules.Set) (*ScriptResult, error) {
	sf, err := script.ScanFile(path)
	if err != nil {
		return nil, &InputError{err} // also script.ErrNoParser in a build without cgo
	}
	fs, ne, err := set.EvaluateScript(ctx, sf)
	var failed []string
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("lint %s: %w", path, err)
		}
		// A rule that fails or times out (a tiny timeout, a broken team
		// rule) does not sink the file: the other findings stand and the
		// failure is listed, as for traces.
		for _, re := range ruleErrors(path, err) {
			failed = append(failed, re.ruleLine())
		}
	}
	sr := &ScriptResult{
		Path: path, RelPath: filepath.ToSlash(path), Findings: []rules.Finding{}, Suppressed: []Suppressed{},
		NotEvaluated: ne, Diagnostics: sf.Diagnostics, Partial: len(sf.Diagnostics) > 0, Facts: sf, RuleErrors: failed,
	}
	if sr.NotEvaluated == nil {
		sr.NotEvaluated = []rules.NotEvaluated{}
	}
	for _, f := range fs {
		if ig, ok := ignoredBy(sf.Ignores, f); ok {
			sr.Suppressed = append(sr.Suppressed, Suppressed{Finding: f, Reason: ig.Reason, IgnoreLine: ig.Line})
			continue
		}
		sr.Findings = append(sr.Findings, f)
	}
	return sr, nil
}

// ignoredBy finds the ignore comment silencing f: one naming f's rule on
// f's line, or alone on the line above it.
func ignoredBy(igs []script.Ignore, f rules.Finding) (script.Ignore, bool) {
	if f.Location == nil {
		return script.Ignore{}, false
	}
	for _, ig := range igs {
		if !slices.Contains(ig.Rules, f.Rule) {
			continue
		}
		if ig.Line == f.Location.Line || (ig.Standalone && ig.Line == f.Location.Line-1) {
			return ig, true
		}
	}
	return script.Ignore{}, false
}

// ExpandScripts turns paths into Python files: files as given, directories
// walked recursively for *.py in lexical order. A file given by name that
// is not Python (see IsPythonFile) is an error when nothing else is left;
// Lint lists such files as skipped instead.
func ExpandScripts(paths []string) ([]string, error) {
	out, _, err := expandScripts(paths)
	return out, err
}

func expandScripts(paths []string) ([]string, []SkippedFile, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no script given: pass a Python file or a directory")
	}
	var out []string
	skipped := []SkippedFile{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("open script: %w", err)
		}
		if !st.IsDir() {
			if ok, why := IsPythonFile(p); !ok {
				skipped = append(skipped, SkippedFile{Path: p, RelPath: filepath.ToSlash(p), Reason: why})
				continue
			}
			out = append(out, p)
			continue
		}
		found, skips, err := scanDir(p, func(path string, d fs.DirEntry) bool {
			name := d.Name()
			return !strings.HasPrefix(name, ".") && !skipDirs[name]
		}, func(name string) bool { return strings.HasSuffix(name, ".py") })
		if err != nil {
			return nil, nil, fmt.Errorf("read script directory %s: %w", p, err)
		}
		for _, sk := range skips {
			skipped = append(skipped, SkippedFile{Path: sk.Path, RelPath: filepath.ToSlash(sk.Path), Reason: sk.Reason})
		}
		if len(found) == 0 {
			return nil, nil, fmt.Errorf("read script directory %s: no *.py files in it", p)
		}
		// A file found in a directory that cannot be read (a dangling
		// symlink) is listed as skipped; the others are still linted.
		readable := found[:0]
		for _, f := range found {
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
				why := "not a regular file"
				if err != nil {
					why = "unreadable: " + err.Error()
				}
				skipped = append(skipped, SkippedFile{Path: f, RelPath: filepath.ToSlash(f), Reason: why})
				continue
			}
			readable = append(readable, f)
		}
		found = readable
		sort.Strings(found)
		out = append(out, found...)
	}
	if len(out) == 0 {
		var names []string
		for _, sk := range skipped {
			names = append(names, fmt.Sprintf("%s (%s)", sk.Path, sk.Reason))
		}
		return nil, nil, fmt.Errorf("nothing to lint: skipped %s", strings.Join(names, ", "))
	}
	return out, skipped, nil
}

// IsPythonFile reports whether a file given by name is a Python script:
// a .py / .pyw / .pyi name, or a first line that is a python shebang
// (#!/usr/bin/env python3). The reason says why not.
func IsPythonFile(path string) (bool, string) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py", ".pyw", ".pyi":
		return true, ""
	}
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		buf := make([]byte, 128)
		n, _ := f.Read(buf)
		first, _, _ := strings.Cut(string(buf[:n]), "\n")
		if strings.HasPrefix(first, "#!") && strings.Contains(first, "python") {
			return true, ""
		}
	}
	ext := filepath.Ext(path)
	if ext == "" {
		return false, "not a Python file: no .py extension and no python shebang"
	}
	return false, fmt.Sprintf("not a Python file: %s is not .py", ext)
}

var skipDirs = map[string]bool{"__pycache__": true, "venv": true, "node_modules": true, "site-packages": true}

// repoRoot is the nearest directory at or above the working directory that
// holds .git, else the working directory.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return wd
		}
		d = parent
	}
}

// relTo returns path relative to root, slash-separated, when it lies inside
// root; else path slash-separated.
func relTo(root, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}
