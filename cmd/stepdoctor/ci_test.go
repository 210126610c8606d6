package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/stepdoctor/stepdoctor/internal/sariftest"
)

// ciStep is a GitHub Actions step.
type ciStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	With map[string]string `yaml:"with"`
}

type ciWorkflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]struct {
		RunsOn string   `yaml:"runs-on"`
		Steps  []ciStep `yaml:"steps"`
	} `yaml:"jobs"`
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runLine runs one stepdoctor command line of a workflow or hook: $VAR
// expanded from env, split on blanks, "> FILE" capturing stdout.
func runLine(t *testing.T, line string, env map[string]string) int {
	t.Helper()
	line = os.Expand(line, func(k string) string { return env[k] })
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "stepdoctor" {
		t.Fatalf("not a stepdoctor command: %q", line)
	}
	args, redirect := f[1:], ""
	for i, a := range args {
		if a == ">" && i+1 < len(args) {
			redirect, args = args[i+1], args[:i]
			break
		}
	}
	code, stdout, stderr := runCLI(t, args...)
	if code == 2 {
		t.Errorf("%s: exit 2 (usage or input error): %s", line, stderr)
	}
	if redirect != "" {
		if err := os.WriteFile(redirect, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return code
}

// validSARIF checks a SARIF file against the schemas the reports tests use
// (internal/sariftest: the subset, and the official schema in CI).
func validSARIF(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(t, b); err != nil {
		t.Errorf("%s does not validate: %v", path, err)
	}
	var log struct {
		Runs []struct {
			Tool struct{ Driver struct{ Version string } }
		}
	}
	if json.Unmarshal(b, &log) != nil || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Version == "" {
		t.Errorf("%s: no tool.driver.version", path)
	}
}

// TestGitHubActionsExample parses docs/ci/github-actions.yml and runs its
// stepdoctor commands against the sample traces and scripts: lint writes
// SARIF that validates and is uploaded with upload-sarif, analyze gates on
// --fail-on and --baseline (0 when the change made it faster, 3 when it
// regressed), writes the Markdown report the comment step posts and SARIF
// for upload.
func TestGitHubActionsExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/ci/github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf ciWorkflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("parse workflow: %v", err)
	}
	if len(wf.Jobs) != 1 || wf.Permissions["security-events"] != "write" {
		t.Fatalf("workflow: %d jobs, permissions %v", len(wf.Jobs), wf.Permissions)
	}
	for _, k := range []string{"SCRIPTS", "TRACE", "BASELINE", "SCRIPT"} {
		if wf.Env[k] == "" {
			t.Errorf("env %s not set in the workflow", k)
		}
	}
	var steps []ciStep
	for _, j := range wf.Jobs {
		steps = j.Steps
	}
	uploads := map[string]bool{}
	var commands []string
	install := false
	for _, s := range steps {
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
			uploads[s.With["sarif_file"]] = true
		}
		if strings.Contains(s.Run, "go install github.com/stepdoctor/stepdoctor/cmd/stepdoctor@") {
			install = true
		}
		for _, l := range strings.Split(s.Run, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "stepdoctor ") {
				commands = append(commands, strings.TrimSpace(l))
			}
		}
	}
	if !install || !uploads["lint.sarif"] || !uploads["analyze.sarif"] || len(commands) != 3 {
		t.Fatalf("install %v, uploads %v, commands %q", install, uploads, commands)
	}
	gate := ""
	for _, c := range commands {
		if strings.Contains(c, "--baseline") {
			gate = c
		}
		if strings.Contains(c, "analyze") && !strings.Contains(c, "--baseline") && !strings.Contains(c, ".sarif") {
			t.Errorf("analyze step writes no SARIF: %s", c)
		}
	}
	if !strings.Contains(gate, "--fail-on") || !strings.Contains(gate, "report.md") {
		t.Errorf("gate %q: want --baseline, --fail-on and -o report.md", gate)
	}
	traces := abs(t, "../../testdata/traces")
	env := map[string]string{
		"SCRIPTS": abs(t, "../../testdata/scripts"),
		"SCRIPT":  abs(t, "../../testdata/scripts/every_mistake.py"),
	}
	for _, c := range []struct {
		name, trace, baseline string
		gate                  int
	}{
		{"faster", "healthy.pt.trace.json", "dataloader_bound.pt.trace.json", 0},
		{"slower", "dataloader_bound.pt.trace.json", "healthy.pt.trace.json", exitRegression},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			env["TRACE"], env["BASELINE"] = filepath.Join(traces, c.trace), filepath.Join(traces, c.baseline)
			for _, line := range commands {
				code := runLine(t, line, env)
				want := 0
				if line == gate {
					want = c.gate
				}
				if code != want {
					t.Errorf("%s: exit %d, want %d", line, code, want)
				}
			}
			for _, f := range []string{"lint.sarif", "analyze.sarif"} {
				validSARIF(t, f)
			}
			md, err := os.ReadFile("report.md")
			if err != nil || !strings.Contains(string(md), "# stepdoctor report") || !strings.Contains(string(md), "Made by stepdoctor") {
				t.Errorf("report.md: %v", err)
			}
		})
	}
}

// TestPreCommitHook parses .pre-commit-hooks.yaml and runs the hook's
// entry the way pre-commit does (entry, args, then the staged Python
// files): a clean script passes, a script with medium findings fails.
func TestPreCommitHook(t *testing.T) {
	b, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID       string   `yaml:"id"`
		Name     string   `yaml:"name"`
		Entry    string   `yaml:"entry"`
		Args     []string `yaml:"args"`
		Language string   `yaml:"language"`
		Types    []string `yaml:"types"`
	}
	if err := yaml.Unmarshal(b, &hooks); err != nil {
		t.Fatalf("parse hooks: %v", err)
	}
	if len(hooks) != 1 {
		t.Fatalf("%d hooks", len(hooks))
	}
	h := hooks[0]
	if h.ID != "stepdoctor-lint" || h.Entry != "stepdoctor lint" || h.Language != "golang" || len(h.Types) != 1 || h.Types[0] != "python" || h.Name == "" {
		t.Fatalf("hook %+v", h)
	}
	for file, want := range map[string]int{"clean.py": 0, "every_mistake.py": 1} {
		line := h.Entry + " " + strings.Join(h.Args, " ") + " " + abs(t, filepath.Join("../../testdata/scripts", file))
		if code := runLine(t, line, nil); code != want {
			t.Errorf("%s: exit %d, want %d", line, code, want)
		}
	}
}
