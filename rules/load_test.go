package rules

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// update is accepted so that `go test ./... -update` works in every package.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")

// writeRules writes files into a fresh directory and returns it.
func writeRules(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodExpr = `id: team-many-memcpy
title: Many copies per step
severity: low
category: memory-transfer
requires: [memcpy_per_step]
params:
  max_per_step: 10
when: memcpy_per_step > params.max_per_step
impact: "0.01"
message: "{{ memcpy_per_step }} copies per step"
doc: |
  Too many copies. Fix:
  ` + "```python\n  x = x.to(device, non_blocking=True)\n  ```" + `
references: [https://pytorch.org/docs/stable/notes/cuda.html]
`

func regoRule(id, body string) string {
	return `# METADATA
# title: Team rule
# description: A team rule.
# custom:
#   id: ` + id + `
#   severity: low
#   category: host-overhead
#   requires: [gpu_idle_ratio]
#   references: [https://pytorch.org/docs/stable/profiler.html]
package stepdoctor.rules.` + strings.ReplaceAll(id, "-", "_") + `

import rego.v1

finding contains f if {
` + body + `
}
`
}

func TestLoadTeamRules(t *testing.T) {
	dir := writeRules(t, map[string]string{
		"many_memcpy.yaml": goodExpr,
		"idle.rego": regoRule("team-idle", `	input.gpu_idle_ratio > 0.9
	f := {"msg": "idle", "impact": 0.1}`),
		"notes.txt": "ignored",
	})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := s.Rule("team-many-memcpy")
	if !ok || r.Kind != "expr" || r.Source != filepath.ToSlash(filepath.Join(dir, "many_memcpy.yaml"))+":1" {
		t.Fatalf("team-many-memcpy: %+v", r)
	}
	if r, ok := s.Rule("team-idle"); !ok || r.Kind != "rego" || !strings.HasSuffix(r.Source, "idle.rego:1") {
		t.Fatalf("team-idle: %+v", r)
	}
	if _, ok := s.Rule("dataloader-bound"); !ok {
		t.Fatal("built-in rules missing from Load")
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{
			name:  "expr missing title",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "title: Many copies per step\n", "", 1)},
			want:  []string{"load rule team-many-memcpy", "a.yaml:1", "missing field title"},
		},
		{
			name:  "a case file put among the rules",
			files: map[string]string{"cases.yaml": "rule: team-many-memcpy\ncases:\n  - name: a\n    expect: quiet\n"},
			want:  []string{"cases.yaml:1", "this is a case file (rule, cases), not a rule: move it to the cases/ folder"},
		},
		{
			name:  "expr missing references",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "references: [https://pytorch.org/docs/stable/notes/cuda.html]\n", "", 1)},
			want:  []string{"load rule team-many-memcpy", "missing field references"},
		},
		{
			name:  "expr misspelled fact in when",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "when: memcpy_per_step >", "when: memcpy_per_stpe >", 1)},
			want:  []string{"load rule team-many-memcpy", "a.yaml:1", "unknown name memcpy_per_stpe"},
		},
		{
			name:  "expr misspelled param",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "params.max_per_step", "params.max_per_stpe", 1)},
			want:  []string{"load rule team-many-memcpy", "has no field max_per_stpe"},
		},
		{
			name:  "expr misspelled fact in message",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "{{ memcpy_per_step }}", "{{ memcpy_per_setp }}", 1)},
			want:  []string{"load rule team-many-memcpy", "unknown name memcpy_per_setp"},
		},
		{
			name:  "expr nullable fact not in requires",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "when: memcpy_per_step >", "when: memcpy_time_ratio > 0.5 && memcpy_per_step >", 1)},
			want:  []string{"nullable fact memcpy_time_ratio is used but not listed in requires"},
		},
		{
			name:  "expr impact not a number",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, `impact: "0.01"`, `impact: "memcpy_per_step > 3"`, 1)},
			want:  []string{"load rule team-many-memcpy", "evaluates to bool, want a number"},
		},
		{
			name:  "expr when not a bool",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "when: memcpy_per_step > params.max_per_step", "when: memcpy_per_step", 1)},
			want:  []string{"load rule team-many-memcpy", "compile when"},
		},
		{
			name:  "expr unclosed placeholder",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "{{ memcpy_per_step }}", "{{ memcpy_per_step", 1)},
			want:  []string{"load rule team-many-memcpy", `message: unclosed "{{"`},
		},
		{
			name:  "expr unknown field",
			files: map[string]string{"a.yaml": goodExpr + "serverity: high\n"},
			want:  []string{"load rule team-many-memcpy", `unknown field "serverity"`},
		},
		{
			name:  "requires names no fact",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "requires: [memcpy_per_step]", "requires: [memcpy_per_step, gpu_idel_ratio]", 1)},
			want:  []string{"load rule team-many-memcpy", `requires "gpu_idel_ratio": no such fact`},
		},
		{
			name:  "bad severity and category",
			files: map[string]string{"a.yaml": strings.Replace(strings.Replace(goodExpr, "severity: low", "severity: critical", 1), "category: memory-transfer", "category: speed", 1)},
			want:  []string{`severity "critical"`, `category "speed"`},
		},
		{
			name:  "id not kebab-case",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "id: team-many-memcpy", "id: Team_Many", 1)},
			want:  []string{`id "Team_Many" is not kebab-case`},
		},
		{
			name: "duplicate id across files",
			files: map[string]string{
				"a.yaml": goodExpr,
				"b.yaml": goodExpr,
			},
			want: []string{"load rule team-many-memcpy", "duplicate id, first defined at", "a.yaml:1", "b.yaml:1"},
		},
		{
			name:  "duplicate of a built-in id",
			files: map[string]string{"a.yaml": strings.Replace(goodExpr, "id: team-many-memcpy", "id: launch-bound", 1)},
			want:  []string{"load rule launch-bound", "duplicate id", "builtin/launch_bound.rego"},
		},
		{
			name: "rego missing severity",
			files: map[string]string{"r.rego": strings.Replace(regoRule("team-x", `	f := {"msg": "x", "impact": 0}`),
				"#   severity: low\n", "", 1)},
			want: []string{"load rule team-x", "r.rego:1", "missing field severity"},
		},
		{
			name:  "rego without METADATA",
			files: map[string]string{"r.rego": "package stepdoctor.rules.x\n\nfinding contains 1 if false\n"},
			want:  []string{"r.rego:1", "no # METADATA block"},
		},
		{
			name:  "rego wrong package",
			files: map[string]string{"r.rego": strings.Replace(regoRule("team-x", `	f := {"msg": "x", "impact": 0}`), "package stepdoctor.rules.team_x", "package team.x", 1)},
			want:  []string{"package team.x is not stepdoctor.rules.<name>"},
		},
		{
			name:  "rego without finding",
			files: map[string]string{"r.rego": strings.Replace(regoRule("team-x", `	f := {"msg": "x", "impact": 0}`), "finding contains f", "result contains f", 1)},
			want:  []string{"load rule team-x", "no `finding contains f if { ... }` rule"},
		},
		{
			name:  "rego misspelled fact",
			files: map[string]string{"r.rego": regoRule("team-x", "\tinput.gpu_idel_ratio > 0.5\n\tf := {\"msg\": \"x\", \"impact\": 0}")},
			want:  []string{"compile rule team-x", "r.rego:", "gpu_idel_ratio"},
		},
		{
			name:  "rego unknown custom field",
			files: map[string]string{"r.rego": strings.Replace(regoRule("team-x", `	f := {"msg": "x", "impact": 0}`), "#   severity: low\n", "#   severity: low\n#   sevrity: high\n", 1)},
			want:  []string{"load rule team-x", `unknown custom field "sevrity"`},
		},
		{
			name:  "suppressed_by unknown rule",
			files: map[string]string{"a.yaml": goodExpr + "suppressed_by: [no-such-rule]\n"},
			want:  []string{"load rule team-many-memcpy", `suppressed_by "no-such-rule": no such rule`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeRules(t, tt.files)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestLoadMissingDir: a rules dir that is missing, a file or empty is
// named with what is wrong with it (not "open .").
func TestLoadMissingDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	os.WriteFile(file, []byte(goodExpr), 0o644)
	missing := filepath.Join(dir, "nope")
	for path, want := range map[string]string{
		missing: "read rules dir " + missing + ": no such file or directory",
		file:    "read rules dir " + file + ": not a directory",
		"":      "read rules dir: the path is empty",
	} {
		if _, err := Load(path); err == nil || err.Error() != want {
			t.Errorf("Load(%q): %v, want %q", path, err, want)
		}
	}
}

// TestLoadSameDirTwice: a dir named twice (config and flag, another
// spelling of its path) is read once, not refused for duplicate ids.
func TestLoadSameDirTwice(t *testing.T) {
	dir := writeRules(t, map[string]string{"many_memcpy.yaml": goodExpr})
	once, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Load(dir, dir+string(filepath.Separator)+".")
	if err != nil {
		t.Fatalf("the same dir twice: %v", err)
	}
	if len(twice.Rules()) != len(once.Rules()) {
		t.Errorf("%d rules from the dir twice, %d once", len(twice.Rules()), len(once.Rules()))
	}
}

// TestUniqueDirs: later paths to a directory already listed are dropped
// (another spelling, a symlink); unreadable paths stay for the caller.
func TestUniqueDirs(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip("skipping: no symlinks here:", err)
	}
	missing := filepath.Join(dir, "missing")
	got := UniqueDirs([]string{dir, dir + "/.", link, missing, missing, ""})
	want := []string{dir, missing, missing, ""}
	if !slices.Equal(got, want) {
		t.Errorf("UniqueDirs: %q, want %q", got, want)
	}
}
