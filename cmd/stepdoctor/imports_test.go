package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/stepdoctor/stepdoctor/"

// allowedImports is the table in docs/ARCHITECTURE.md "Packages and what
// each may import": the module's packages each non-test file of a package
// may import.
var allowedImports = map[string][]string{
	"internal/hugemem":         {},
	"internal/version":         {},
	"internal/mdcheck":         {},
	"internal/sariftest":       {},
	"internal/objstore":        {},
	"internal/objstore/fakes3": {},
	"engine/trace":             {"internal/hugemem"},
	"engine/trace/tracetest":   {},
	"engine/facts":             {"engine/trace", "internal/hugemem"},
	"engine/facts/factstest":   {},
	"engine/script":            {},
	"rules/builtin":            {},
	"rules":                    {"engine/facts", "engine/script", "rules/builtin"},
	"engine":                   {"engine/trace", "engine/facts", "engine/script", "rules", "internal/objstore"},
	"reports":                  {"engine", "engine/facts", "engine/trace", "rules", "internal/version"},
	"cmd/stepdoctor":           {"engine", "engine/facts", "engine/trace", "engine/script", "rules", "rules/builtin", "reports", "internal/version", "internal/objstore"},
}

// thirdParty limits where the rule engines and the parser may be imported.
var thirdParty = map[string][]string{
	"github.com/open-policy-agent/opa":  {"rules"},
	"github.com/expr-lang/expr":         {"rules"},
	"github.com/tree-sitter/":           {"engine/script"},
	"gocloud.dev/":                      {"internal/objstore"},
	"github.com/johannesboyne/gofakes3": {"internal/objstore/fakes3"},
}

// Imports point one way (engine/trace <- engine/facts <- rules <- engine <-
// reports <- cmd); reports never imports OPA or expr.
func TestImportsPointOneWay(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		allowed, ok := allowedImports[pkg]
		if !ok {
			t.Errorf("%s: package %s is not in docs/ARCHITECTURE.md's import table (add it there and here)", path, pkg)
			return nil
		}
		seen[pkg] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok {
				if !contains(allowed, dep) {
					t.Errorf("%s imports %s: %s may import only %v", path, dep, pkg, allowed)
				}
				continue
			}
			for prefix, pkgs := range thirdParty {
				if strings.HasPrefix(p, prefix) && !contains(pkgs, pkg) {
					t.Errorf("%s imports %s: only %v may", path, p, pkgs)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for pkg := range allowedImports {
		if !seen[pkg] {
			missing = append(missing, pkg)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("packages in the import table but not in the tree: %v", missing)
	}
}

// Code and docs cite docs/ARCHITECTURE.md, which is in the repository,
// not the design notes it was written from, which are not.
func TestNoReferenceOutsideTheRepository(t *testing.T) {
	gone := "DESIGN" + ".md"
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".rego", ".yaml", ".tmpl", ".html", ".txt":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), gone) {
			t.Errorf("%s cites %s, which is not in the repository; cite docs/ARCHITECTURE.md", path, gone)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
