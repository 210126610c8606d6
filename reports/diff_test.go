package reports

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
)

var diffRenderers = []struct {
	ext    string
	render func(io.Writer, *engine.DiffResult) error
}{
	{"md", DiffMarkdown},
	{"html", DiffHTML},
	{"json", DiffJSON},
	{"txt", DiffText},
}

// diffFixtures: the sample traces through the whole pipeline (a DataLoader
// fix), and a hostile run (script tags, Markdown and control characters in
// every trace string; one step, so too few to judge; another device) against
// the GPU training fixture.
var diffFixtures = []struct {
	name string
	make func() *engine.DiffResult
}{
	{"diff_samples", func() *engine.DiffResult {
		return engine.Diff(sampleTrace("dataloader_bound")(), sampleTrace("healthy")())
	}},
	{"diff_hostile", func() *engine.DiffResult {
		h := hostile()
		h.Traces = h.Traces[:1]
		h.Traces[0].Input.Path = "before/" + xssScript + "\x1b[31m.json"
		return engine.Diff(h, gpuTraining())
	}},
}

// TestDiffGolden pins diff output in every format; regenerate with go test
// ./reports -update and review the diff.
func TestDiffGolden(t *testing.T) {
	for _, fx := range diffFixtures {
		for _, rd := range diffRenderers {
			name := fx.name + "." + rd.ext
			t.Run(name, func(t *testing.T) {
				var b strings.Builder
				if err := rd.render(&b, fx.make()); err != nil {
					t.Fatal(err)
				}
				got := []byte(b.String())
				path := filepath.Join("testdata", name)
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read golden (run go test ./reports -update): %v", err)
				}
				if string(got) != string(want) {
					t.Errorf("%s differs from golden; run go test ./reports -update and review the diff\n%s", path, firstDiff(got, want))
				}
			})
		}
	}
}

// TestDiffEscapesTraceStrings: device names, paths, kernel and operator
// names from a trace never become markup in Markdown or HTML, and never
// carry control characters to a terminal.
func TestDiffEscapesTraceStrings(t *testing.T) {
	d := diffFixtures[1].make()
	if len(d.Pairs[0].Warnings) == 0 || len(d.Pairs[0].Kernels.Removed) == 0 || len(d.Pairs[0].Ops.Removed) == 0 {
		t.Fatalf("the hostile diff lacks a warning or table rows: %+v", d.Pairs[0])
	}
	for _, rd := range diffRenderers[:2] {
		var b strings.Builder
		if err := rd.render(&b, d); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if _, body, ok := strings.Cut(out, "<body>"); ok { // the page's own head has style and meta
			out = body
		}
		if tags := dataTags(out); len(tags) > 0 {
			t.Errorf("%s: markup from trace strings: %v", rd.ext, tags)
		}
		if strings.Contains(strings.ToLower(out), `href="javascript`) {
			t.Errorf("%s: a javascript link from a trace string", rd.ext)
		}
	}
	var b strings.Builder
	if err := DiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x00\r") {
		t.Errorf("text diff carries control characters:\n%q", b.String())
	}
}

// TestDiffMarkdownFitsAComment: a comparison of many ranks is cut to
// MarkdownLimit and says so; the HTML keeps every pair.
func TestDiffMarkdownFitsAComment(t *testing.T) {
	one := engine.Diff(sampleTrace("dataloader_bound")(), sampleTrace("healthy")())
	d := &engine.DiffResult{SchemaVersion: one.SchemaVersion}
	for range 300 {
		d.Pairs = append(d.Pairs, one.Pairs[0])
	}
	var mdb, htmlb bytes.Buffer
	if err := DiffMarkdown(&mdb, d); err != nil {
		t.Fatal(err)
	}
	if err := DiffHTML(&htmlb, d); err != nil {
		t.Fatal(err)
	}
	md := mdb.String()
	if len(md) > MarkdownLimit || !strings.Contains(md, "Report truncated to fit a comment") {
		t.Errorf("300 pairs: %d bytes of Markdown (limit %d), truncation said: %v", len(md), MarkdownLimit, strings.Contains(md, "Report truncated"))
	}
	if html := htmlb.String(); strings.Count(html, "<h2>") < 300 {
		t.Errorf("the HTML lost pairs: %d sections", strings.Count(html, "<h2>"))
	}
}
