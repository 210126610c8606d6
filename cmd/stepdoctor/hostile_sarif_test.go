package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/internal/sariftest"
)

// evilSARIFRule is a team rule whose title, message (with the top kernel's
// name), doc and reference attack SARIF viewers: raw HTML, javascript:
// links plain and entity-encoded, an image, mentions and references, a
// bidi override.
const evilSARIFRule = `id: team-evil
title: "Evil <img src=x onerror=alert('title')> [t](javascript:alert(1)) @octocat #1"
severity: low
category: kernel-efficiency
requires: [steps_count, top_kernel_name]
when: steps_count >= 0
impact: "0.01"
message: "msg <script>alert('m')</script> [m](javascript:alert(2)) @octocat {{ top_kernel_name }}"
doc: |
  **Why.** <img src=x onerror=alert(1)> <a href="javascript:alert(7)">a</a> [r]: javascript:alert(9)
  [ref][r] <javascript:alert(10)> [e](&#106;avascript:alert(11)) <script>alert(3)</script>
  [click](javascript:alert(4)) ![img](http://evil.example/x.png) @octocat fixes #12 ` + "\u202e" + `rtl

  **Fix.** nothing
references:
  - "https://evil.example/<script>"
`

// evilKernel is a kernel and device name a trace can carry (JSON-escaped):
// markup, a javascript: link, an ANSI escape, a bidi override, a newline.
const evilKernel = `k<img src=x onerror=alert(1)>\n# heading\n[link](javascript:alert(3)) \u001b[31mRED \u202eRTL \\[x\\] @octocat #9`

// sarifInert validates a SARIF log and checks it with sariftest.Inert and
// its Markdown with mdcheck.
func sarifInert(t *testing.T, what string, doc []byte) {
	t.Helper()
	if err := sariftest.Validate(t, doc); err != nil {
		t.Fatalf("%s: invalid SARIF: %v", what, err)
	}
	problems, md, err := sariftest.Inert(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
	for _, m := range md {
		checkMD(t, what+" markdown", m)
	}
}

// TestHostileSARIF: analyze and lint SARIF on a hostile team rule, hostile
// kernel and device names, file names and ignore comments: valid SARIF, no
// unescaped '[' or ']' in any plain-text message (SARIF 2.1.0 §3.11.6), no
// control or bidi character, help.markdown defused as in the Markdown
// report (no raw HTML, image, javascript: link or mention), and a web
// helpUri only.
func TestHostileSARIF(t *testing.T) {
	rulesDir, _, _ := writeHostile(t)
	if err := os.WriteFile(filepath.Join(rulesDir, "evil.yaml"), []byte(evilSARIFRule), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "dataloader_bound.pt.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), `"ampere_sgemm_128x64_tn"`, `"`+evilKernel+`"`)
	s = strings.ReplaceAll(s, `"NVIDIA A100-SXM4-80GB"`, `"NVIDIA `+evilKernel+`"`)
	if s == string(b) {
		t.Fatal("the trace has no kernel to rename")
	}
	trace := filepath.Join(t.TempDir(), "inj.pt.trace.json")
	if err := os.WriteFile(trace, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "evil.sarif")
	code, _, errs := runCLI(t, "analyze", "-q", "--rules", rulesDir, "-o", out, trace)
	if code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errs)
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"id": "team-evil"`) {
		t.Fatalf("the team rule is missing:\n%.3000s", doc)
	}
	if !strings.Contains(string(doc), `\\[link\\](javascript:alert(3))`) {
		t.Error("the kernel name is missing from the message, or its brackets are not escaped")
	}
	sarifInert(t, "analyze sarif", doc)
	md := markdownOf(t, doc)
	for _, bad := range []string{"<img", "<a ", "<script", "](javascript:", "<javascript:", "@octocat"} {
		if strings.Contains(md, bad) {
			t.Errorf("analyze sarif: help.markdown holds %q", bad)
		}
	}
	if !strings.Contains(string(doc), `"helpUri": "https://evil.example/%3Cscript%3E"`) {
		t.Error("analyze sarif: helpUri not percent-encoded")
	}

	if !script.Available {
		t.Skip("built without the Python parser: lint not checked")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scripts", "every_mistake.py"))
	if err != nil {
		t.Fatal(err)
	}
	py := strings.Replace(string(src), "torch.backends.cudnn.benchmark = False  # want: cudnn-benchmark-off",
		"# stepdoctor: ignore[cudnn-benchmark-off] "+hostileText+" \u202e[x](javascript:1)\ntorch.backends.cudnn.benchmark = False", 1)
	p := filepath.Join(t.TempDir(), hostileName+".py")
	if err := os.WriteFile(p, []byte(py), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCLI(t, "lint", "--format", "sarif", p)
	if code != 0 || !strings.Contains(stdout, `"kind": "inSource"`) {
		t.Fatalf("lint sarif: exit %d, no suppression: %s\n%.2000s", code, errs, stdout)
	}
	sarifInert(t, "lint sarif", []byte(stdout))
}

// markdownOf joins the "markdown" strings of a SARIF log.
func markdownOf(t *testing.T, doc []byte) string {
	t.Helper()
	_, md, err := sariftest.Inert(doc)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(md, "\n")
}
