package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLintCLI(t *testing.T) {
	code, out, errOut := runCLI(t, "lint", "../../testdata/scripts/every_mistake.py")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if first != "../../testdata/scripts/every_mistake.py:15:1: cudnn-benchmark-off torch.backends.cudnn.benchmark is set to False in a convolutional CUDA model: cuDNN does not autotune its convolution algorithms" {
		t.Errorf("first line %q", first)
	}
	if code, _, _ := runCLI(t, "lint", "--fail-on", "medium", "../../testdata/scripts/every_mistake.py"); code != 1 {
		t.Errorf("--fail-on medium: exit %d, want 1", code)
	}
	if code, out, _ := runCLI(t, "lint", "--fail-on", "high", "../../testdata/scripts/clean.py"); code != 0 || out != "" {
		t.Errorf("clean script: exit %d, output %q", code, out)
	}
	for _, args := range [][]string{
		{"lint", "missing.py"},
		{"lint", "--format", "xml", "../../testdata/scripts/clean.py"},
		{"lint", "--fail-on", "urgent", "../../testdata/scripts/clean.py"},
		{"lint"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestLintCLIFormats(t *testing.T) {
	_, out, _ := runCLI(t, "lint", "--format", "json", "../../testdata/scripts/image_classification.py")
	var doc struct {
		Scripts []struct {
			Suppressed []struct {
				Rule   string `json:"rule"`
				Reason string `json:"reason"`
			} `json:"suppressed"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scripts) != 1 || len(doc.Scripts[0].Suppressed) != 1 || doc.Scripts[0].Suppressed[0].Reason != "the benchmark times each step on purpose" {
		t.Errorf("suppressed findings in json: %+v", doc.Scripts)
	}
	_, out, _ = runCLI(t, "lint", "--format", "sarif", "../../testdata/scripts/image_classification.py")
	if !strings.Contains(out, `"justification": "the benchmark times each step on purpose"`) || !strings.Contains(out, `"version": "2.1.0"`) {
		t.Errorf("sarif output lacks the suppression: %.300s", out)
	}
	_, out, _ = runCLI(t, "lint", "--format", "md", "../../testdata/scripts/mnist.py")
	if !strings.Contains(out, "| 30:29 | `blocking-copy` | medium |") {
		t.Errorf("markdown: %s", out)
	}
}

func TestLintCLISyntaxError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.py")
	if err := os.WriteFile(p, []byte("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\ndef f(:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "lint", p)
	if code != 0 || !strings.Contains(out, "dataloader-num-workers") || !strings.Contains(errOut, "syntax error") {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestAnalyzeWithScript(t *testing.T) {
	code, out, errOut := runCLI(t, "analyze", "--format", "json", "--script", "../../testdata/scripts/every_mistake.py", "../../testdata/traces/dataloader_bound.pt.trace.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "in the script: ../../testdata/scripts/every_mistake.py:19:16 (dataloader-num-workers)") || strings.Contains(out, `"rule": "dataloader-num-workers"`) {
		t.Errorf("joined output:\n%s", out)
	}
	if code, _, _ := runCLI(t, "analyze", "--script", "missing.py", "../../testdata/traces/dataloader_bound.pt.trace.json"); code != 2 {
		t.Errorf("missing script: exit %d, want 2", code)
	}
}

func TestLintCLISyntaxErrorSaysWhatWasFound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.py")
	if err := os.WriteFile(p, []byte("import torch\nfor x in loader\n    y = x.item()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "lint", p)
	if code != 0 || !strings.Contains(errOut, `bad.py:2:1: syntax error: missing ':' after "for x in loader"`) {
		t.Errorf("exit %d, err %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "lint", "--format", "json", p)
	if code != 0 || !strings.Contains(out, `"partial": true`) || !strings.Contains(out, `"node": "ERROR"`) || !strings.Contains(errOut, "missing ':'") {
		t.Errorf("json: exit %d, out %s, err %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "lint", "--format", "sarif", p)
	if code != 0 || !strings.Contains(out, `"id": "syntax-error"`) || !strings.Contains(out, `missing ':'`) {
		t.Errorf("sarif: exit %d, out %s", code, out)
	}
}

func TestLintCLISkipsNonPython(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "a.txt")
	py := filepath.Join(dir, "train.py")
	if err := os.WriteFile(txt, []byte("for x in loader:\n    x.item()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(py, []byte("import torch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "lint", txt)
	if code != 2 || !strings.Contains(errOut, "nothing to lint") || !strings.Contains(errOut, "a.txt (not a Python file: .txt is not .py)") {
		t.Errorf("only a.txt: exit %d, err %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "lint", "--format", "json", txt, py)
	if code != 0 || !strings.Contains(errOut, "a.txt: skipped: not a Python file") || !strings.Contains(out, `"reason": "not a Python file: .txt is not .py"`) {
		t.Errorf("a.txt and train.py: exit %d, out %s, err %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "lint", "--format", "sarif", txt, py)
	if code != 0 || !strings.Contains(out, `"id": "skipped-file"`) {
		t.Errorf("sarif: exit %d, out %s", code, out)
	}
}
