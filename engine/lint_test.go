package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
	"github.com/stepdoctor/stepdoctor/rules"
)

var wantRE = regexp.MustCompile(`#\s*want:\s*(.*)$`)

// wants reads the `# want: rule-id ...` comments of a script: one entry
// "line rule-id" per expected finding.
func wants(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		if m := wantRE.FindStringSubmatch(line); m != nil {
			for _, id := range strings.Fields(m[1]) {
				out = append(out, fmt.Sprintf("%d %s", i+1, id))
			}
		}
	}
	slices.Sort(out)
	return out
}

// foldedRE finds the lines a once-per-loop finding names for the other
// occurrences of its cause: "also syncs at lines 38, 39" (host-sync-in-loop),
// "copies at line 30", "the other copy on line 30" (blocking-copy, also
// when named by host-sync-in-loop).
var foldedRE = regexp.MustCompile(`(syncs|copies|copy) (?:at|on) lines? ([0-9][0-9, ]*)`)

// foldedLines lists "line rule-id" for every occurrence named in a
// finding's message instead of being reported on its own.
func foldedLines(fs []rules.Finding) []string {
	var out []string
	for _, f := range fs {
		for _, m := range foldedRE.FindAllStringSubmatch(f.Message, -1) {
			rule := "host-sync-in-loop"
			if m[1] != "syncs" {
				rule = "blocking-copy"
			}
			for _, n := range strings.Split(m[2], ",") {
				if n = strings.TrimSpace(n); n != "" {
					out = append(out, n+" "+rule)
				}
			}
		}
	}
	return out
}

// TestLintWants checks, analysistest-style, that lint reports exactly the
// findings each testdata script announces in `# want:` comments.
func TestLintWants(t *testing.T) {
	files, err := filepath.Glob("../testdata/scripts/*.py")
	if err != nil || len(files) < 6 {
		t.Fatalf("testdata scripts: %v %v", files, err)
	}
	// The files by name: review/ below holds scripts scored by a hand
	// review (TestLintReviewScripts), not by `# want:` comments.
	res, err := Lint(context.Background(), LintOptions{Paths: files})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scripts) != len(files) {
		t.Fatalf("linted %d scripts, want %d", len(res.Scripts), len(files))
	}
	checkWants(t, res)
}

// TestLintWantsSiblings checks the `# want:` comments of scripts whose
// facts come from modules of their directory: an in-memory dataset class
// and a small model class imported from a sibling module, and a step loop
// in a module that a GPU script imports (the same loop under a CPU script
// stays quiet).
func TestLintWantsSiblings(t *testing.T) {
	res, err := Lint(context.Background(), LintOptions{Paths: []string{"../testdata/siblings"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scripts) != 6 {
		t.Fatalf("linted %d scripts, want 6", len(res.Scripts))
	}
	checkWants(t, res)
}

// checkWants compares each linted script's findings with its `# want:`
// comments.
func checkWants(t *testing.T, res *LintResult) {
	t.Helper()
	for _, sr := range res.Scripts {
		t.Run(filepath.Base(sr.Path), func(t *testing.T) {
			var got []string
			for _, f := range sr.Findings {
				got = append(got, fmt.Sprintf("%d %s", f.Location.Line, f.Rule))
				if f.Location.File != sr.Path || f.Location.Column < 1 {
					t.Errorf("finding %s has location %+v", f.Rule, f.Location)
				}
			}
			slices.Sort(got)
			folded := foldedLines(sr.Findings)
			want := wants(t, sr.Path)
			for _, w := range want {
				if i := slices.Index(got, w); i >= 0 {
					got = slices.Delete(got, i, i+1)
				} else if i := slices.Index(folded, w); i >= 0 {
					// Reported once per loop: named in the loop's finding.
					folded = slices.Delete(folded, i, i+1)
				} else {
					t.Errorf("%s:%s: missing finding", sr.Path, w)
				}
			}
			for _, g := range got {
				t.Errorf("%s:%s: unexpected finding", sr.Path, g)
			}
			if len(sr.Diagnostics) > 0 {
				t.Errorf("diagnostics on a valid script: %+v", sr.Diagnostics)
			}
		})
	}
}

func TestLintCleanScriptHasNoFindings(t *testing.T) {
	sr, err := LintFile(context.Background(), "../testdata/scripts/clean.py", mustRules(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Findings) != 0 || len(sr.Suppressed) != 0 {
		t.Errorf("clean.py: %+v", sr.Findings)
	}
}

func mustRules(t *testing.T) *rules.Set {
	t.Helper()
	s, err := rules.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeScript(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "train.py")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLintIgnoreComments(t *testing.T) {
	p := writeScript(t, `import torch
for x, y in loader:
    loss = model(x)
    loss.backward()
    a = loss.item()  # stepdoctor: ignore[host-sync-in-loop] needed for early stopping
    # stepdoctor: ignore[host-sync-in-loop]
    b = loss.item()
    c = loss.item()  # stepdoctor: ignore[blocking-copy] wrong rule
    d = 1  # stepdoctor: ignore[host-sync-in-loop] trailing comment does not cover the next line
    e = loss.item()
model.cuda()
`)
	sr, err := LintFile(context.Background(), p, mustRules(t))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range sr.Findings {
		if f.Rule == "host-sync-in-loop" {
			lines = append(lines, f.Location.Line)
		}
	}
	// One finding per loop, at its first sync (line 5, ignored with a
	// reason); the later ones are named in it.
	if len(lines) != 0 {
		t.Errorf("reported host syncs on lines %v, want none", lines)
	}
	if len(sr.Suppressed) != 1 || sr.Suppressed[0].Reason != "needed for early stopping" || !strings.Contains(sr.Suppressed[0].Message, "also syncs at lines 7, 8, 10 ") {
		t.Errorf("suppressed: %+v", sr.Suppressed)
	}
}

func TestLintSyntaxErrorIsDiagnostic(t *testing.T) {
	p := writeScript(t, "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\ndef f(:\n")
	sr, err := LintFile(context.Background(), p, mustRules(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Diagnostics) == 0 || len(sr.Findings) == 0 {
		t.Errorf("want partial findings and a diagnostic, got %+v / %+v", sr.Findings, sr.Diagnostics)
	}
}

func TestLintInputErrors(t *testing.T) {
	_, err := Lint(context.Background(), LintOptions{Paths: []string{filepath.Join(t.TempDir(), "missing.py")}})
	var ie *InputError
	if err == nil || !strings.Contains(err.Error(), "missing.py") || !errorsAs(err, &ie) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Lint(context.Background(), LintOptions{Paths: []string{t.TempDir()}}); err == nil || !strings.Contains(err.Error(), "no *.py") {
		t.Errorf("empty dir: %v", err)
	}
	// A file over script.MaxScriptBytes is refused before it is parsed
	// (scanning takes about 0.5 GB a MiB).
	if !script.Available {
		return
	}
	big := filepath.Join(t.TempDir(), "generated.py")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x = 1\n"), script.MaxScriptBytes/6+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Lint(context.Background(), LintOptions{Paths: []string{big}}); err == nil || !strings.Contains(err.Error(), "generated.py: over the 1 MiB") || !errorsAs(err, &ie) {
		t.Errorf("script over the size cap: %v", err)
	}
}

func errorsAs(err error, target **InputError) bool {
	for e := err; e != nil; {
		if x, ok := e.(*InputError); ok {
			*target = x
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func f64(x float64) *float64 { return &x }
func i64(x int64) *int64     { return &x }
func bptr(x bool) *bool      { return &x }

func TestJoinScript(t *testing.T) {
	set := mustRules(t)
	sr, err := LintFile(context.Background(), "../testdata/scripts/every_mistake.py", set)
	if err != nil {
		t.Fatal(err)
	}
	measured := &facts.Facts{
		SchemaVersion: facts.SchemaVersion, HasGPU: true, HasSteps: true, StepsCount: 5,
		DataloaderTimeRatio: f64(0.4), DataloaderSingleProcess: bptr(true),
		SyncPerStep: f64(3), SyncTimeRatio: f64(0.12),
		MemcpyPageableHtoDCount: i64(10), MemcpyTimeRatio: f64(0.03),
	}
	quiet := &facts.Facts{SchemaVersion: facts.SchemaVersion, HasGPU: true, HasSteps: true, StepsCount: 5,
		DataloaderTimeRatio: f64(0.01), DataloaderSingleProcess: bptr(false), SyncPerStep: f64(0), MemcpyPageableHtoDCount: i64(0)}
	res := &Result{Traces: []*TraceResult{
		{Input: Input{Path: "a.json"}, Facts: measured, Findings: []rules.Finding{{Rule: "dataloader-bound", Impact: 0.4, Confidence: rules.Confirmed, Severity: rules.SeverityHigh, Message: "x"}}},
		{Input: Input{Path: "b.json"}, Facts: quiet},
	}}
	if err := JoinScript(res, sr, set); err != nil {
		t.Fatal(err)
	}
	first := map[string]rules.Finding{}
	for _, f := range res.Traces[0].Findings {
		if _, ok := first[f.Rule]; !ok {
			first[f.Rule] = f
		}
	}
	// The trace already reports dataloader-bound: the script's DataLoader
	// finding merges into it (the line is added), no second finding.
	db := first["dataloader-bound"]
	if _, dup := first["dataloader-num-workers"]; dup || db.Location == nil || !strings.Contains(db.Message, "in the script: "+sr.Path+":19:16 (dataloader-num-workers)") {
		t.Errorf("dataloader-num-workers not merged into dataloader-bound: %+v", db)
	}
	// every_mistake.py's loop syncs every step: its blocking copies are named
	// by the host-sync-in-loop finding, not reported on their own.
	for id, want := range map[string]float64{"host-sync-in-loop": 0.12, "dataloader-pin-memory": 0.03, "cpu-tensor-then-copy": 0.03} {
		f := first[id]
		if f.Confidence != rules.Confirmed || f.Impact != want || !strings.Contains(f.Message, "confirmed: the trace shows") {
			t.Errorf("%s: confidence %s impact %v message %q, want confirmed at %v", id, f.Confidence, f.Impact, f.Message, want)
		}
		if f.Location == nil || !strings.HasPrefix(f.Message, fmt.Sprintf("%s:%d:", sr.Path, f.Location.Line)) {
			t.Errorf("%s: message does not point at the line: %q", id, f.Message)
		}
	}
	if f := first["no-autocast"]; f.Confidence != rules.Likely {
		t.Errorf("no-autocast has no trace backing, got %s", f.Confidence)
	}
	// Ranked by measured time: the confirmed host syncs come right after dataloader-bound.
	if got := res.Traces[0].Findings[1].Rule; got != "host-sync-in-loop" {
		t.Errorf("second finding %s, want host-sync-in-loop", got)
	}
	for _, f := range res.Traces[1].Findings {
		if f.Confidence == rules.Confirmed {
			t.Errorf("trace b backs nothing, yet %s is confirmed", f.Rule)
		}
	}
	if len(sr.Findings) == 0 || strings.Contains(sr.Findings[0].Message, "confirmed") {
		t.Error("JoinScript modified the script result")
	}
}

// A script with syntax errors, joined to a trace, leaves a note that it
// was partly checked (lint says so of it too); a script read whole, none.
func TestJoinScriptPartlyChecked(t *testing.T) {
	if !script.Available {
		t.Skip("no Python parser in this build")
	}
	dir := t.TempDir()
	set, err := rules.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ src, want string }{
		{"import torch\nmodel.cuda()\ndef f(:\n    x = = 1\nfor x in loader:\n    x.cuda()\n", "partly checked: at line 3, syntax error"},
		{"import torch\nmodel.cuda()\nfor x in loader:\n    x.cuda()\n", ""},
	} {
		path := filepath.Join(dir, "train.py")
		if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
			t.Fatal(err)
		}
		sr, err := LintFile(context.Background(), path, set)
		if err != nil {
			t.Fatal(err)
		}
		res := &Result{Traces: []*TraceResult{{Input: Input{Path: "a.json"}, Facts: &facts.Facts{SchemaVersion: facts.SchemaVersion, HasGPU: true}}}}
		if err := JoinScript(res, sr, set); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(res.Notes, "\n")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, "script "+path+" "+tt.want) {
			t.Errorf("notes %q, want %q", got, tt.want)
		}
	}
}

// With a with_stack trace, a script finding is tied to the Python function
// the trace saw its events in.
func TestJoinScriptWithStack(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "train.py")
	src := "import torch\nfrom torch.utils.data import DataLoader\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n        print(loss.item())\nmodel.cuda()\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	b := tracetest.New()
	for k := 0; k < 2; k++ {
		s := float64(k) * 1000
		b.Step(k+1, s, 1000)
		for _, fr := range []struct {
			name    string
			ts, dur float64
		}{{"train.py(1): <module>", s, 1000}, {"train.py(4): train", s + 1, 998}} {
			b.Raw(map[string]any{"ph": "X", "cat": "python_function", "name": fr.name, "pid": b.Pid, "tid": b.Tid, "ts": fr.ts, "dur": fr.dur})
		}
		b.Op("aten::item", s+500, 40)
	}
	tracePath := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(tracePath, b.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	set := mustRules(t)
	res, err := Analyze(context.Background(), Options{Paths: []string{tracePath}, Rules: set})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := LintFile(context.Background(), script, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := JoinScript(res, sr, set); err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, f := range res.Traces[0].Findings {
		if f.Rule == "host-sync-in-loop" {
			msg = f.Message
		}
	}
	if !strings.Contains(msg, "with_stack: the trace puts 2 host syncs (0.08 ms) inside train() at train.py:4") {
		t.Errorf("host-sync-in-loop message %q", msg)
	}
}

// A team's threshold override of the confirming trace rule reaches the
// join: with dataloader-bound's min_ratio raised to 0.1, a 7% DataLoader
// share no longer confirms dataloader-num-workers; with host-sync-in-step's
// min_per_step at 2, 1.5 syncs per step no longer confirm host-sync-in-loop.
func TestJoinScriptFollowsConfiguredThresholds(t *testing.T) {
	set := mustRules(t)
	sr, err := LintFile(context.Background(), "../testdata/scripts/every_mistake.py", set)
	if err != nil {
		t.Fatal(err)
	}
	join := func(set *rules.Set) map[string]rules.Finding {
		t.Helper()
		f := &facts.Facts{SchemaVersion: facts.SchemaVersion, HasGPU: true, HasSteps: true, StepsCount: 5,
			DataloaderTimeRatio: f64(0.07), DataloaderSingleProcess: bptr(true), SyncPerStep: f64(1.5), SyncTimeRatio: f64(0.1)}
		res := &Result{Traces: []*TraceResult{{Input: Input{Path: "a.json"}, Facts: f}}}
		if err := JoinScript(res, sr, set); err != nil {
			t.Fatal(err)
		}
		out := map[string]rules.Finding{}
		for _, f := range res.Traces[0].Findings {
			if _, ok := out[f.Rule]; !ok {
				out[f.Rule] = f
			}
		}
		return out
	}
	def := join(set)
	for _, id := range []string{"dataloader-num-workers", "host-sync-in-loop"} {
		if def[id].Confidence != rules.Confirmed {
			t.Errorf("default thresholds: %s not confirmed: %+v", id, def[id])
		}
	}
	team, err := set.With(rules.Config{Params: rules.Params{"dataloader-bound": {"min_ratio": 0.1}, "host-sync-in-step": {"min_per_step": 2}}})
	if err != nil {
		t.Fatal(err)
	}
	got := join(team)
	for _, id := range []string{"dataloader-num-workers", "host-sync-in-loop"} {
		if f := got[id]; f.Confidence != rules.Likely || strings.Contains(f.Message, "confirmed") {
			t.Errorf("raised thresholds: %s still confirmed: %+v", id, f)
		}
	}
}

// A dangling *.py symlink in a directory is listed as skipped; the other
// scripts are still linted (it ended the whole run with exit 2).
func TestLintSkipsDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("import torch\nx = torch.zeros(3).cuda()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing.py"), filepath.Join(dir, "x.py")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	res, err := Lint(context.Background(), LintOptions{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scripts) != 1 || filepath.Base(res.Scripts[0].Path) != "train.py" {
		t.Errorf("linted %+v, want train.py only", res.Scripts)
	}
	if len(res.Skipped) != 1 || filepath.Base(res.Skipped[0].Path) != "x.py" || !strings.Contains(res.Skipped[0].Reason, "unreadable") {
		t.Errorf("skipped %+v, want x.py as unreadable", res.Skipped)
	}
}
