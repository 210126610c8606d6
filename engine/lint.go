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
	Facts       *script.Facts       `json:"-"`
}

// Suppressed is a finding silenced by an ignore comment.
type Suppressed struct {
	rules.Finding
	Reason     string `json:"reason"`      // text after ignore[...], may be ""
	IgnoreLine int    `json:"ignore_line"` // line of the comment
}

// Lint scans every script and evaluates the script rules on it. Unreadable
// paths are an *InputError; syntax errors are Diagnostics, not errors.
func Lint(ctx context.Context, opts LintOptions) (*LintResult, error) {
	files, err := ExpandScripts(opts.Paths)
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
	res := &LintResult{SchemaVersion: LintSchemaVersion, Root: root, Scripts: []*ScriptResult{}, Rules: []rules.Rule{}}
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
		return nil, &InputError{err}
	}
	fs, ne, err := set.EvaluateScript(ctx, sf)
	if err != nil {
		return nil, fmt.Errorf("lint %s: %w", path, err)
	}
	sr := &ScriptResult{
		Path: path, RelPath: filepath.ToSlash(path), Findings: []rules.Finding{}, Suppressed: []Suppressed{},
		NotEvaluated: ne, Diagnostics: sf.Diagnostics, Facts: sf,
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
// walked recursively for *.py in lexical order.
func ExpandScripts(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no script given: pass a Python file or a directory")
	}
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("open script: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != p && (strings.HasPrefix(name, ".") || skipDirs[name]) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(name, ".py") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read script directory %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("read script directory %s: no *.py files in it", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
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
