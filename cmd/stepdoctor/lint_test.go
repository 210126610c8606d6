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
	if !strings.Contains(out, "| 48:70 | `host-sync-in-loop` |") {
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
