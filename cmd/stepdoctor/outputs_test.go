package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// copyTrace copies a sample trace to dst and returns its bytes.
func copyTrace(t *testing.T, name, dst string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOutputOntoInputRefused: an -o path that is, or resolves to, an input
// (the same name, .., a symlink, a hard link, a file an input directory
// reads or would read) is refused with exit 2 and the input left
// byte-identical. Before the check each of these wrote the report over the
// trace and exited 0.
func TestOutputOntoInputRefused(t *testing.T) {
	type setup struct {
		args  func(d string) []string
		keep  []string // files (relative to d) that must stay byte-identical
		extra func(t *testing.T, d string)
	}
	cases := map[string]setup{
		"analyze same file": {
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "x.json"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json"},
		},
		"analyze dotdot": {
			args: func(d string) []string {
				return []string{"analyze", "-o", d + "/sub/../x.json", filepath.Join(d, "x.json")}
			},
			keep:  []string{"x.json"},
			extra: func(t *testing.T, d string) { os.Mkdir(filepath.Join(d, "sub"), 0o755) },
		},
		"analyze file in input dir": {
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "log", "rank1.json"), filepath.Join(d, "log")}
			},
			keep: []string{"log/rank0.json", "log/rank1.json"},
			extra: func(t *testing.T, d string) {
				copyTrace(t, "dataloader_bound.pt.trace.json", filepath.Join(d, "log", "rank1.json"))
			},
		},
		"analyze new file the dir scan would read": {
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "log", "deep", "report.json"), filepath.Join(d, "log")}
			},
			keep:  []string{"log/rank0.json"},
			extra: func(t *testing.T, d string) { os.MkdirAll(filepath.Join(d, "log", "deep"), 0o755) },
		},
		"analyze baseline": {
			args: func(d string) []string {
				return []string{"analyze", "--baseline", filepath.Join(d, "b.json"), "-o", filepath.Join(d, "b.json"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json", "b.json"},
			extra: func(t *testing.T, d string) {
				copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "b.json"))
			},
		},
		"analyze script": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "md", "--script", filepath.Join(d, "train.py"), "-o", filepath.Join(d, "train.py"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json", "train.py"},
			extra: func(t *testing.T, d string) {
				os.WriteFile(filepath.Join(d, "train.py"), []byte("import torch\n"), 0o644)
			},
		},
		"analyze config": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "json", "--config", filepath.Join(d, "team.yaml"), "-o", filepath.Join(d, "team.yaml"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json", "team.yaml"},
			extra: func(t *testing.T, d string) {
				os.WriteFile(filepath.Join(d, "team.yaml"), []byte("disable: [memory-headroom]\n"), 0o644)
			},
		},
		"analyze new rule file in rules dir": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "json", "--rules", filepath.Join(d, "team"), "-o", filepath.Join(d, "team", "report.yaml"), filepath.Join(d, "x.json")}
			},
			keep:  []string{"x.json"},
			extra: func(t *testing.T, d string) { os.Mkdir(filepath.Join(d, "team"), 0o755) },
		},
		"diff after": {
			args: func(d string) []string {
				return []string{"diff", filepath.Join(d, "b.json"), filepath.Join(d, "x.json"), "-o", filepath.Join(d, "b.json")}
			},
			keep: []string{"x.json", "b.json"},
			extra: func(t *testing.T, d string) {
				copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "b.json"))
			},
		},
		"analyze file URL onto its plain path": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "json", "-o", "file://" + filepath.ToSlash(filepath.Join(d, "x.json")), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json"},
		},
		"analyze plain path onto its file URL": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "json", "-o", filepath.Join(d, "x.json"), "file://" + filepath.ToSlash(filepath.Join(d, "x.json"))}
			},
			keep: []string{"x.json"},
		},
		"analyze file URL onto a rank of the input dir": {
			args: func(d string) []string {
				return []string{"analyze", "--format", "json", "-o", "file://" + filepath.ToSlash(filepath.Join(d, "log", "rank0.json")), filepath.Join(d, "log")}
			},
			keep: []string{"log/rank0.json"},
		},
		"facts file URL": {
			args: func(d string) []string {
				return []string{"facts", "-o", "file://" + filepath.ToSlash(filepath.Join(d, "x.json")), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json"},
		},
	}
	if runtime.GOOS != "windows" {
		cases["analyze symlink"] = setup{
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "link.json"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json"},
			extra: func(t *testing.T, d string) {
				if err := os.Symlink(filepath.Join(d, "x.json"), filepath.Join(d, "link.json")); err != nil {
					t.Skip("symlink:", err)
				}
			},
		}
		cases["analyze symlinked dir"] = setup{
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "alias", "x.json"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json"},
			extra: func(t *testing.T, d string) {
				if err := os.Symlink(d, filepath.Join(d, "alias")); err != nil {
					t.Skip("symlink:", err)
				}
			},
		}
		cases["analyze hard link to a file in input dir"] = setup{
			args: func(d string) []string {
				return []string{"analyze", "-o", filepath.Join(d, "rank0.md"), filepath.Join(d, "log")}
			},
			keep: []string{"log/rank0.json"},
			extra: func(t *testing.T, d string) {
				if err := os.Link(filepath.Join(d, "log", "rank0.json"), filepath.Join(d, "rank0.md")); err != nil {
					t.Skip("hard link:", err)
				}
			},
		}
		cases["diff hard link"] = setup{
			args: func(d string) []string {
				return []string{"diff", "-o", filepath.Join(d, "hard.json"), filepath.Join(d, "b.json"), filepath.Join(d, "x.json")}
			},
			keep: []string{"x.json", "b.json"},
			extra: func(t *testing.T, d string) {
				copyTrace(t, "healthy.pt.trace.json", filepath.Join(d, "b.json"))
				if err := os.Link(filepath.Join(d, "b.json"), filepath.Join(d, "hard.json")); err != nil {
					t.Skip("hard link:", err)
				}
			},
		}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			copyTrace(t, "dataloader_bound.pt.trace.json", filepath.Join(d, "x.json"))
			copyTrace(t, "dataloader_bound.pt.trace.json", filepath.Join(d, "log", "rank0.json"))
			if c.extra != nil {
				c.extra(t, d)
			}
			before := map[string][]byte{}
			for _, k := range c.keep {
				b, err := os.ReadFile(filepath.Join(d, k))
				if err != nil {
					t.Fatal(err)
				}
				before[k] = b
			}
			args := c.args(d)
			code, _, stderr := runCLI(t, args...)
			if code != 2 || !strings.Contains(stderr, "refuse output") {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and a refusal", args, code, stderr)
			}
			for _, k := range c.keep {
				b, err := os.ReadFile(filepath.Join(d, k))
				if err != nil || !bytes.Equal(b, before[k]) {
					t.Errorf("input %s changed (%v)", k, err)
				}
			}
		})
	}
}

// TestOutputBesideInputAllowed: the guard does not refuse ordinary outputs
// next to the inputs, nor files an input directory's scan would not read.
func TestOutputBesideInputAllowed(t *testing.T) {
	d := t.TempDir()
	copyTrace(t, "dataloader_bound.pt.trace.json", filepath.Join(d, "log", "rank0.json"))
	for _, args := range [][]string{
		{"analyze", "-o", filepath.Join(d, "report.json"), filepath.Join(d, "log")},
		{"analyze", "-o", filepath.Join(d, "log", "report.md"), filepath.Join(d, "log")},
		{"diff", "-o", filepath.Join(d, "log", "diff.html"), filepath.Join(d, "log", "rank0.json"), filepath.Join(d, "log")},
	} {
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestRefuseStdinFileAsOutput: with standard input redirected from a file
// (analyze - -o t.json < t.json), -o naming that file is refused before
// anything is read (found by a review: the report replaced the trace).
func TestRefuseStdinFileAsOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, []byte(`{"traceEvents":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer func(old *os.File) { os.Stdin = old }(os.Stdin)
	os.Stdin = f
	if err := checkOutput(path, traceInputs("-")); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("checkOutput(%s, -) = %v, want a refusal naming standard input", path, err)
	}
	if err := checkOutput(filepath.Join(filepath.Dir(path), "other.md"), traceInputs("-")); err != nil {
		t.Errorf("another output: %v", err)
	}
}
