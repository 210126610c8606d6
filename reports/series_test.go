package reports

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestSeriesSectionsOmittedWhenEmpty removes each kind of chart data in
// turn: its chart and table disappear, the others stay, and nothing breaks.
func TestSeriesSectionsOmittedWhenEmpty(t *testing.T) {
	type part struct {
		name   string
		clear  func(*facts.Facts)
		html   []string // present only with the data
		md     string
		charts int // charts the part draws
	}
	parts := []part{
		{"timeline", func(f *facts.Facts) { f.Timeline = nil }, []string{`id="timeline-0-t"`}, "**GPU timeline**", 1},
		{"steps", func(f *facts.Facts) { f.Steps = nil }, []string{`id="steps-0-t"`, "Per-step table"}, "Per-step breakdown", 1},
		{"kernels", func(f *facts.Facts) { f.TopKernels = nil }, []string{`id="kernels-0-t"`, "<th>Kernel</th>"}, "**Top kernels by GPU time**", 1},
		{"ops", func(f *facts.Facts) { f.TopOps = nil }, []string{`id="ops-0-t"`, "<th>Operator</th>"}, "**Top CPU operators by self time**", 1},
	}
	full := string(render(t, HTML, gpuTraining()))
	fullMD := string(render(t, Markdown, gpuTraining()))
	for _, p := range parts {
		for _, s := range p.html {
			if !strings.Contains(full, s) {
				t.Errorf("full report lacks %q", s)
			}
		}
		if !strings.Contains(fullMD, p.md) {
			t.Errorf("full Markdown lacks %q", p.md)
		}
		r := gpuTraining()
		p.clear(r.Traces[0].Facts)
		h := string(render(t, HTML, r))
		md := string(render(t, Markdown, r))
		for _, s := range p.html {
			if strings.Contains(h, s) {
				t.Errorf("without %s: HTML still has %q", p.name, s)
			}
		}
		if strings.Contains(md, p.md) {
			t.Errorf("without %s: Markdown still has %q", p.name, p.md)
		}
		extra := 0
		if p.name == "timeline" {
			extra = 1 // the busy/idle bar returns when there is no timeline
		}
		if got, want := strings.Count(h, "<svg "), strings.Count(full, "<svg ")-p.charts+extra; got != want {
			t.Errorf("without %s: %d charts, want %d", p.name, got, want)
		}
	}
	r := gpuTraining()
	f := r.Traces[0].Facts
	f.Timeline, f.Steps, f.TopKernels, f.TopOps, f.RooflineOps = nil, nil, nil, nil, nil
	h := string(render(t, HTML, r))
	md := string(render(t, Markdown, r))
	if strings.Contains(h, "Where the time goes") || strings.Contains(md, "Where the time goes") {
		t.Error("empty series still get a section heading")
	}
}

func TestTimelineBuckets(t *testing.T) {
	var spans []facts.TimelineSpan
	for i := 0; i < 5000; i++ {
		kind := "busy"
		if i%2 == 1 {
			kind = "sync"
		}
		d := 1.0
		if kind == "sync" {
			d = 3
		}
		spans = append(spans, facts.TimelineSpan{OffsetUS: float64(i/2) * 4, DurUS: d, Kind: kind})
		if kind == "busy" {
			spans[len(spans)-1].OffsetUS = float64(i/2) * 4
		} else {
			spans[len(spans)-1].OffsetUS = float64(i/2)*4 + 1
		}
	}
	s := buildSeries(&facts.Facts{WindowUS: 10000, Timeline: spans})
	c := timelineChart(0, s)
	if c == nil || c.Note == "" {
		t.Fatal("a long timeline is not bucketed with a note")
	}
	if len(c.Rects) > timelineBuckets+1 {
		t.Errorf("%d rects for %d buckets", len(c.Rects), timelineBuckets)
	}
	// Sync covers 3/4 of every slice: every bucket is sync, merged into one.
	if len(c.Rects) != 2 || c.Rects[1].Class != "r-sync" {
		t.Errorf("buckets = %+v", c.Rects)
	}
	// Without idle-cause facts the summary has no causes (it never sums the
	// downsampled timeline).
	if len(s.IdleCauses) != 0 || s.BusyUS != 0 {
		t.Errorf("idle causes = %+v busy %v", s.IdleCauses, s.BusyUS)
	}
}

// TestFixSnippetEscaped: the fix code block cannot break out of its
// element in HTML or out of its fence in Markdown.
func TestFixSnippetEscaped(t *testing.T) {
	r := gpuTraining()
	r.Traces[0].Findings[0].Doc = "Fix:\n\n````python\nx = 1  # </code></pre>" + xssScript + "\n```\n" + xssImg + "\n````\n"
	h := string(render(t, HTML, r))
	if strings.Contains(h, xssScript) || strings.Contains(h, xssImg) {
		t.Error("fix snippet markup reached the HTML unescaped")
	}
	if !strings.Contains(h, `<pre><code class="language-python">x = 1  # &lt;/code&gt;&lt;/pre&gt;&lt;script&gt;`) {
		t.Error("fix snippet not shown as code")
	}
	md := render(t, Markdown, r)
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md, &out); err != nil {
		t.Fatal(err)
	}
	// The fixture's elementwise doc has its own image; nothing else may be an element.
	rendered := strings.ReplaceAll(out.String(), `<img src="https://example.com/fusion.png" alt="fusion diagram">`, "")
	if tags := dataTags(rendered); len(tags) > 0 {
		t.Errorf("fix snippet markup became elements in rendered Markdown: %q", tags)
	}
	if !strings.Contains(string(md), "**Fix:**\n\n````python\n") {
		t.Error("fence not longer than the backtick runs inside the snippet")
	}
}

// TestSharedTraceReports renders the HTML and Markdown reports of every
// trace in ../shared/traces: each HTML under 1 MiB, each Markdown within
// MarkdownLimit. Inputs that are not Kineto traces must fail as input errors.
func TestSharedTraceReports(t *testing.T) {
	if testing.Short() {
		t.Skip("shared traces skipped in -short mode")
	}
	root := filepath.Join("..", "..", "shared", "traces")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("shared traces skipped: %s not present", root)
	}
	var paths []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) && !strings.HasSuffix(p, "REFERENCE.json") {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) == 0 {
		t.Skip("no shared traces found")
	}
	for _, p := range paths {
		r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{p}})
		if err != nil {
			var ie *engine.InputError
			if errors.As(err, &ie) {
				t.Logf("%s: not analysed (input error): %v", p, err)
				continue
			}
			t.Errorf("%s: %v", p, err)
			continue
		}
		h := render(t, HTML, r)
		if len(h) >= 1<<20 {
			t.Errorf("%s: HTML report is %d bytes, want under 1 MiB", p, len(h))
		}
		md := render(t, Markdown, r)
		if len(md) > MarkdownLimit {
			t.Errorf("%s: Markdown report is %d bytes, limit %d", p, len(md), MarkdownLimit)
		}
	}
}

// TestPhaseRows: a trace without steps whose iterations name their phase
// gets the whole window and each phase as rows, the columns the roles some
// row has time in, shares of each row's own time and the three largest
// roles; a trace without phases gets no rows.
func TestPhaseRows(t *testing.T) {
	f := &facts.Facts{HasGPU: true, WindowUS: 1000, GPUBusyRatio: f64(0.6),
		StepKernelRatio: f64(0.6), StepMemcpyRatio: f64(0), StepRuntimeRatio: f64(0.1), StepOtherRatio: f64(0.3),
		PhaseBreakdowns: []facts.PhaseBreakdown{
			{Phase: "prefill", Spans: 2, TimeUS: 400, WindowRatio: 0.4, GPUBusyRatio: 0.9, RolesUS: map[string]float64{"kernel": 360, "runtime": 40}},
			{Phase: "decode", Spans: 5, TimeUS: 500, WindowRatio: 0.5, GPUBusyRatio: 0.4, RolesUS: map[string]float64{"kernel": 200, "cpu_op": 50, "other": 250}},
		}}
	cols, rows := phaseRows(f)
	var labels []string
	for _, c := range cols {
		labels = append(labels, c.Role)
	}
	if strings.Join(labels, ",") != "kernel,runtime,cpu_op,other" {
		t.Fatalf("columns = %v", labels)
	}
	if len(rows) != 3 || rows[0].Label != "whole window" || rows[1].Label != "prefill" || rows[2].Label != "decode" {
		t.Fatalf("rows = %+v", rows)
	}
	dec := rows[2]
	if dec.Spans != "5" || dec.Time != fmtDur(500) || dec.Window != "50.0%" || dec.Busy != "40.0%" || strings.Join(dec.Roles, " ") != "40.0% 0.0% 10.0% 50.0%" {
		t.Errorf("decode row = %+v", dec)
	}
	if dec.Top != "other 50.0%, kernels 40.0%, CPU ops 10.0%" {
		t.Errorf("decode top = %q", dec.Top)
	}
	if c, r := phaseRows(&facts.Facts{WindowUS: 1000, StepKernelRatio: f64(1)}); c != nil || r != nil {
		t.Errorf("no phases: %v %v", c, r)
	}
}
