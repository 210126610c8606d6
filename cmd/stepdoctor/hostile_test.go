package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/internal/mdcheck"
)

// hostileName is a file name a pull request can add: a newline that forges
// a lint line, an escape sequence, a mention, an image and markup.
const hostileName = "a\nb.py:1:1: forged-rule @alice #12 ![i](http:x) <img src=x> \x1b[31m"

// hostileText is what team rules and ignore comments may say.
const hostileText = `@bob #7 org/repo#8 ![i](http://evil.example/x.png) [a](&#106;avascript:alert(1)) <img src=x onerror=alert(1)> <javascript:alert(2)>`

// hostileRule is a team rule that fires on every trace and whose title,
// message, doc and references attack the Markdown outputs.
const hostileRule = `id: team-hostile
title: "Title @carol ![t](http://evil.example/t.png) <b>x</b>"
severity: low
category: host-overhead
requires: [steps_count]
when: steps_count >= 0
impact: "0.01"
message: "` + hostileText + `"
doc: |
  Doc @dave #5 ![pic](http://example.com/x.png) <img src=x onerror=alert(3)>
  [one](javascript:alert(4)) [two](&#106;avascript:alert(5)) [three][r] &#64;erin
  </details>

  [r]: &#x6A;avascript:alert(6)
references: ["https://example.com/@frank?a=<b>&c=1", "https://example.com/ok"]
`

func writeHostile(t *testing.T) (rulesDir, traceA, traceB string) {
	t.Helper()
	rulesDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(rulesDir, "hostile.yaml"), []byte(hostileRule), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, src := range []string{"dataloader_bound", "healthy"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", src+".pt.trace.json"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, hostileName+src+".pt.trace.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			traceA = p
		} else {
			traceB = p
		}
	}
	return rulesDir, traceA, traceB
}

func checkMD(t *testing.T, what, out string) {
	t.Helper()
	if out == "" {
		t.Errorf("%s: no output", what)
	}
	if ps := mdcheck.Problems(out); len(ps) > 0 {
		t.Errorf("%s: unsafe Markdown:\n  %s\n--- output ---\n%s", what, strings.Join(ps, "\n  "), out)
	}
}

func checkText(t *testing.T, what, out string) {
	t.Helper()
	if cs := mdcheck.ControlChars(out); len(cs) > 0 {
		t.Errorf("%s: control characters %v in\n%q", what, cs, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "b.py:1:1: forged-rule") {
			t.Errorf("%s: forged line %q", what, l)
		}
	}
}

// TestHostileMarkdownEverySubcommand runs every Markdown-producing
// subcommand (analyze, diff, lint, rules doc, rules show) on hostile file
// names, team rules and ignore comments, and parses the output as GitHub
// would: no image, raw HTML, unsafe link or mention. The text outputs of
// the same runs carry no control character and no forged lint line.
func TestHostileMarkdownEverySubcommand(t *testing.T) {
	rulesDir, a, b := writeHostile(t)
	code, out, errs := runCLI(t, "analyze", "--rules", rulesDir, "--format", "md", a)
	if code != 0 || !strings.Contains(out, "team-hostile") {
		t.Fatalf("analyze md: exit %d, team rule missing: %s", code, errs)
	}
	checkMD(t, "analyze md", out)
	code, out, errs = runCLI(t, "analyze", "--rules", rulesDir, "--format", "text", a)
	if code != 0 {
		t.Fatalf("analyze text: exit %d: %s", code, errs)
	}
	checkText(t, "analyze text", out)
	checkText(t, "analyze stderr", errs)

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("rules: ["+rulesDir+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "diff", "--config", cfg, "--format", "md", a, b)
	if code != 0 && code != 3 {
		t.Fatalf("diff md: exit %d: %s", code, errs)
	}
	checkMD(t, "diff md", out)
	_, out, errs = runCLI(t, "diff", "--config", cfg, "--format", "text", a, b)
	checkText(t, "diff text", out)
	checkText(t, "diff stderr", errs)

	for _, args := range [][]string{{"rules", "doc"}, {"rules", "show", "team-hostile"}} {
		code, out, errs = runCLI(t, append(args, "--rules", rulesDir)...)
		if code != 0 || !strings.Contains(out, "team-hostile") {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		checkMD(t, strings.Join(args, " "), out)
	}

	if !script.Available {
		t.Skip("built without the Python parser: lint not checked")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scripts", "every_mistake.py"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "torch.backends.cudnn.benchmark = False  # want: cudnn-benchmark-off",
		"# stepdoctor: ignore[cudnn-benchmark-off] "+hostileText+"\ntorch.backends.cudnn.benchmark = False", 1)
	py := filepath.Join(t.TempDir(), hostileName+".py")
	if err := os.WriteFile(py, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "lint", "--format", "md", py)
	if code != 0 || !strings.Contains(out, "Silenced by") {
		t.Fatalf("lint md: exit %d, no suppression: %s\n%s", code, errs, out)
	}
	checkMD(t, "lint md", out)
	code, out, errs = runCLI(t, "lint", py)
	if code != 0 || out == "" {
		t.Fatalf("lint text: exit %d: %s", code, errs)
	}
	checkText(t, "lint text", out)
	checkText(t, "lint stderr", errs)
}
