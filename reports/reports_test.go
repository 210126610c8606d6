package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

type fmtRenderer struct {
	ext    string
	render func(io.Writer, *engine.Result) error
}

var renderers = []fmtRenderer{
	{"md", Markdown},
	{"html", HTML},
	{"json", JSON},
	{"txt", func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }},
	{"color.txt", func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{Color: true, Cut: true}) }},
}

var fixtures = []struct {
	name string
	make func() *engine.Result
}{
	{"gpu_training", gpuTraining},
	{"cpu_only", cpuOnly},
	{"repaired", repaired},
	{"sample_dataloader_bound", sampleTrace("dataloader_bound")},
	{"sample_healthy", sampleTrace("healthy")},
	{"sample_launch_bound", sampleTrace("launch_bound")},
	{"memory_modules", builtTrace("memory_modules", tracetest.MemoryModules)},
	{"memory_2021", builtTrace("memory_2021", tracetest.Memory2021)},
}

func render(t *testing.T, fn func(io.Writer, *engine.Result) error, r *engine.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := fn(&buf, r); err != nil {
		t.Fatalf("render: %v", err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		for _, rd := range renderers {
			if rd.ext == "color.txt" && fx.name != "gpu_training" || strings.HasSuffix(rd.ext, "txt") && strings.HasPrefix(fx.name, "sample_") {
				continue
			}
			name := fx.name + "." + rd.ext
			t.Run(name, func(t *testing.T) {
				got := render(t, rd.render, fx.make())
				path := filepath.Join("testdata", name)
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read golden (run go test ./reports -update): %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from golden; run go test ./reports -update and review the diff\n%s", path, firstDiff(got, want))
				}
			})
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n got:  " + a + "\n want: " + b
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestDeterministic renders every fixture twice in every format, each time
// from a freshly built Result, and requires identical bytes.
func TestDeterministic(t *testing.T) {
	all := append(fixtures, struct {
		name string
		make func() *engine.Result
	}{"hostile", hostile})
	for _, fx := range all {
		for _, rd := range renderers {
			a := render(t, rd.render, fx.make())
			for i := 0; i < 2; i++ {
				b := render(t, rd.render, fx.make())
				if !bytes.Equal(a, b) {
					t.Fatalf("%s.%s: output differs between runs\n%s", fx.name, rd.ext, firstDiff(a, b))
				}
			}
		}
	}
}

// tagRE finds markup elements that must never come from data.
var tagRE = regexp.MustCompile(`(?i)<\s*(script|img|iframe|object|embed|style|link|meta|base|form|input|svg|math)\b`)

func dataTags(s string) []string { return tagRE.FindAllString(s, -1) }

func TestHTMLEscapesTraceStrings(t *testing.T) {
	out := string(render(t, HTML, hostile()))
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "<img", `href="javascript`, ` src="`, "onerror=\"", "<iframe"} {
		if strings.Contains(lower, bad) {
			i := strings.Index(lower, bad)
			t.Errorf("HTML contains %q: ...%s...", bad, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	// The only markup of those kinds is the page's own: one <style>, two
	// <meta> plus three more in head, and three SVG charts for each of the
	// two traces (timeline, step time, per-step breakdown; on a page of
	// several traces top kernels and ops are tables only).
	counts := map[string]int{}
	for _, m := range dataTags(out) {
		counts[strings.ToLower(strings.TrimLeft(m[1:], " \t"))]++
	}
	want := map[string]int{"style": 1, "meta": 5, "svg": 6}
	for k, v := range counts {
		if want[k] != v {
			t.Errorf("HTML has %d <%s> elements, want %d", v, k, want[k])
		}
	}
	// The data is still there, as text.
	for _, s := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(out, s) {
			t.Errorf("HTML lacks escaped text %q", s)
		}
	}
	if !strings.Contains(out, "raw HTML omitted") {
		t.Error("doc raw HTML was not omitted by goldmark")
	}
	if !strings.Contains(out, `href="https://example.com/ok?a=%3cb%3e"`) {
		t.Error("web reference not rendered as an escaped link")
	}
	if !strings.Contains(out, `href="http://example.com/x.png"`) || strings.Contains(out, `src="http://example.com/x.png"`) {
		t.Error("doc image must become a link, never a loaded image")
	}
	if !strings.Contains(out, "this trace was repaired") && !strings.Contains(out, "This trace was repaired") {
		t.Error("repaired banner missing")
	}
}

func TestMarkdownEscapesTraceStrings(t *testing.T) {
	out := string(render(t, Markdown, hostile()))
	if tags := dataTags(out); len(tags) > 0 {
		t.Errorf("Markdown contains markup from data: %q", tags)
	}
	for _, bad := range []string{"<script", "<img", "</details>\n\n</details>"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("Markdown contains %q", bad)
		}
	}
	// Render it as GitHub would, with raw HTML allowed: still no elements
	// from the data, and the names show as text.
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	var html bytes.Buffer
	if err := md.Convert([]byte(out), &html); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	// The doc's own images stay images (a PR comment may show them); the
	// javascript: one is defused. Nothing else may be an element.
	h = strings.ReplaceAll(h, `<img src="http://example.com/x.png" alt="pic2">`, "")
	h = strings.ReplaceAll(h, `<img src="#blocked-javascript-alert(4)" alt="pic">`, "")
	if tags := dataTags(h); len(tags) > 0 {
		t.Errorf("rendered Markdown contains markup from data: %q", tags)
	}
	if strings.Contains(strings.ToLower(h), `href="javascript`) {
		t.Error("rendered Markdown links to javascript:")
	}
	if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("rendered Markdown lost the script text")
	}
	// Table rows keep their column count: pipes in data are escaped.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| Kind |") || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 2 {
			t.Errorf("bad table row %q", line)
		}
	}
	if strings.Contains(out, " `tick` ") {
		t.Error("backticks from data not escaped")
	}
	// Counting <details> opens and closes proves the doc cannot close one.
	if o, c := strings.Count(out, "<details>"), strings.Count(out, "</details>"); o != c {
		t.Errorf("<details> open %d, close %d", o, c)
	}
}

// splitRow splits a GFM table row on unescaped pipes.
func splitRow(line string) []string {
	var cells []string
	var cur strings.Builder
	esc := false
	for _, r := range strings.Trim(line, "|") {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\':
			cur.WriteRune(r)
			esc = true
		case r == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(cells, cur.String())
}

func TestMarkdownTableColumns(t *testing.T) {
	out := string(render(t, Markdown, hostile()))
	var header int
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = 0
			continue
		}
		n := len(splitRow(line))
		if header == 0 {
			header = n
			continue
		}
		if n != header {
			t.Errorf("row has %d cells, header %d: %q", n, header, line)
		}
	}
}

func TestTextStripsControls(t *testing.T) {
	r := gpuTraining()
	r.Traces[0].Findings[0].Message = "evil \x1b[2J\x1b]0;title\x07 name\nsecond"
	out := string(render(t, func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }, r))
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("text output carries control characters: %q", out)
	}
	if !strings.Contains(out, "evil [2J]0;title name second") {
		t.Errorf("message not cleaned as expected: %q", out)
	}
}

func TestMarkdownFitsComment(t *testing.T) {
	out := string(render(t, Markdown, huge()))
	if len(out) > MarkdownLimit {
		t.Fatalf("Markdown is %d bytes, limit %d", len(out), MarkdownLimit)
	}
	if !strings.Contains(out, "left out") && !strings.Contains(out, "Showing") && !strings.Contains(out, "truncated") {
		t.Error("trimmed Markdown does not say it was trimmed")
	}
	// A normal report is not trimmed at all.
	small := string(render(t, Markdown, gpuTraining()))
	if strings.Contains(small, "left out") {
		t.Error("small report says something was left out")
	}
}

func TestMarkdownTrimsLongTables(t *testing.T) {
	r := repaired()
	d := r.Traces[0].Health.Diagnostics
	for len(r.Traces[0].Health.Diagnostics) < 45 {
		r.Traces[0].Health.Diagnostics = append(r.Traces[0].Health.Diagnostics, d...)
	}
	n := len(r.Traces[0].Health.Diagnostics)
	out := string(render(t, Markdown, r))
	if !strings.Contains(out, "_Showing 20 of "+itoa(n)+" diagnostics") {
		t.Errorf("long diagnostics table not trimmed with a note")
	}
	// HTML and JSON keep every row.
	h := string(render(t, HTML, r))
	if got := strings.Count(h, "<td><code>truncated</code>"); got != n/len(d)+boolInt(n%len(d) > 0) {
		t.Errorf("HTML shows %d truncated rows", got)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestJSONShape(t *testing.T) {
	out := render(t, JSON, gpuTraining())
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if doc["schema_version"] != float64(JSONSchemaVersion) {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
	tr := doc["traces"].([]any)[0].(map[string]any)
	for _, k := range []string{"input", "verdict", "facts", "findings", "not_evaluated", "health"} {
		if _, ok := tr[k]; !ok {
			t.Errorf("trace lacks %q", k)
		}
	}
	f := tr["facts"].(map[string]any)
	if f["gpu_idle_ratio"] != 0.5038 {
		t.Errorf("gpu_idle_ratio = %v", f["gpu_idle_ratio"])
	}
	// Nulls stay null in JSON.
	cpu := render(t, JSON, cpuOnly())
	if !bytes.Contains(cpu, []byte(`"gpu_idle_ratio": null`)) {
		t.Error("null fact not written as null")
	}
	// Lists are never null.
	if bytes.Contains(render(t, JSON, repaired()), []byte(`"findings": null`)) {
		t.Error("findings written as null")
	}
	// Non-finite numbers do not break encoding.
	r := gpuTraining()
	r.Traces[0].Findings[0].Impact = nan()
	r.Traces[0].Facts.StepTimeCV = f64(nan())
	nanOut := render(t, JSON, r)
	if !json.Valid(nanOut) {
		t.Error("NaN produced invalid JSON")
	}
	// Fact keys are sorted.
	var raw struct {
		Traces []struct {
			Facts json.RawMessage `json:"facts"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Traces[0].Facts))
	_, _ = dec.Token() // {
	prev := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		if key <= prev {
			t.Errorf("fact keys not sorted: %s after %s", key, prev)
		}
		prev = key
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
}

func nan() float64 {
	var z float64
	return z / z
}

func TestNilResult(t *testing.T) {
	for _, rd := range renderers {
		if err := rd.render(io.Discard, nil); err == nil {
			t.Errorf("%s: nil result gave no error", rd.ext)
		}
	}
	empty := &engine.Result{SchemaVersion: 1, Traces: []*engine.TraceResult{nil, {Input: engine.Input{Path: "x.json"}}}}
	for _, rd := range renderers {
		if err := rd.render(io.Discard, empty); err != nil {
			t.Errorf("%s: %v", rd.ext, err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	for _, rd := range renderers {
		err := rd.render(failWriter{}, gpuTraining())
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: write error = %v", rd.ext, err)
		}
	}
}

func TestFormatFor(t *testing.T) {
	cases := map[string]string{
		"r.md": "md", "R.MARKDOWN": "md", "a/b.html": "html", "x.HTM": "html", "out.json": "json", "report.txt": "text",
	}
	for _, cmd := range []string{ForAnalyze, ForDiff} {
		for path, want := range cases {
			got, err := FormatFor(cmd, path)
			if err != nil || got.Name != want {
				t.Errorf("%s: FormatFor(%q) = %q, %v; want %q", cmd, path, got.Name, err, want)
			}
		}
		wantExts := map[string]string{ForAnalyze: "want .txt, .md, .markdown, .html, .htm, .json or .sarif", ForDiff: "want .txt, .md, .markdown, .html, .htm or .json"}[cmd]
		bad := []string{"report.text", "report", "report.json.gz", "dir.md/file"}
		if cmd == ForDiff {
			bad = append(bad, "diff.sarif")
		}
		for _, path := range bad {
			_, err := FormatFor(cmd, path)
			if err == nil || !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), wantExts) {
				t.Errorf("%s: FormatFor(%q) error = %v", cmd, path, err)
			}
		}
	}
	if f, err := FormatFor(ForAnalyze, "ci.SARIF"); err != nil || f.Name != "sarif" {
		t.Errorf("FormatFor(analyze, ci.SARIF) = %q, %v", f.Name, err)
	}
}

// TestFormatRegistry: the registry answers for flags, help and errors,
// and every format a subcommand offers renders.
func TestFormatRegistry(t *testing.T) {
	for cmd, want := range map[string]string{ForAnalyze: "text, md, html, json or sarif", ForDiff: "text, md, html or json", ForLint: "text, md, json or sarif"} {
		if got := FormatNames(cmd); got != want {
			t.Errorf("FormatNames(%s) = %q, want %q", cmd, got, want)
		}
		if _, err := LookupFormat(cmd, "pdf"); !errors.Is(err, ErrUnknownFormat) || err.Error() != `parse --format: unknown format "pdf" (want `+want+`)` {
			t.Errorf("%s: LookupFormat(pdf) = %v", cmd, err)
		}
	}
	if got := ExtensionNames(ForAnalyze); got != ".txt, .md, .html, .json, .sarif" {
		t.Errorf("ExtensionNames(analyze) = %q", got)
	}
	if got := ExtensionNames(ForDiff); got != ".txt, .md, .html, .json" {
		t.Errorf("ExtensionNames(diff) = %q", got)
	}
	if _, err := LookupFormat(ForDiff, "sarif"); err == nil {
		t.Error("diff offers no sarif")
	}
	// An -o extension names its format too: --format txt as -o x.txt.
	for name, want := range map[string]string{"txt": "text", "markdown": "md", "htm": "html"} {
		if f, err := LookupFormat(ForAnalyze, name); err != nil || f.Name != want {
			t.Errorf("LookupFormat(analyze, %s) = %s, %v; want %s", name, f.Name, err, want)
		}
	}
	res := gpuTraining()
	d := engine.Diff(res, res)
	for _, f := range Formats {
		for _, r := range []func(io.Writer) error{
			func(w io.Writer) error {
				if f.Analyze == nil {
					return nil
				}
				return f.Analyze(w, res, Terminal{})
			},
			func(w io.Writer) error {
				if f.Diff == nil {
					return nil
				}
				return f.Diff(w, d)
			},
			func(w io.Writer) error {
				if f.Lint == nil {
					return nil
				}
				return f.Lint(w, &engine.LintResult{})
			},
		} {
			if err := r(io.Discard); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	if err := WriteFile(path, func(w io.Writer) error { return Markdown(w, gpuTraining()) }); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, render(t, Markdown, gpuTraining())) {
		t.Error("file content differs from rendered report")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v", st.Mode().Perm())
	}

	// A failing render leaves the old report and no temp file.
	boom := errors.New("boom")
	err = WriteFile(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, strings.Repeat("partial ", 100000))
		return boom
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "render report: ") {
		t.Errorf("error = %v", err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, got) {
		t.Error("failed write changed the existing report")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only report.md", names)
	}

	// A missing directory is an error, not a panic.
	if err := WriteFile(filepath.Join(dir, "nope", "r.md"), func(io.Writer) error { return nil }); err == nil {
		t.Error("missing directory gave no error")
	}
}

func TestMarkdownDocRawHTML(t *testing.T) {
	in := "a <b>bold</b> `<code>` and\n\n```\n<script>x</script>\n```\n\n<div>\nblock\n</div>\n\n<https://example.com>\n"
	got := MarkdownDoc(in)
	want := "a &lt;b>bold&lt;/b> `<code>` and\n\n```\n<script>x</script>\n```\n\n&lt;div>\nblock\n&lt;/div>\n\n<https://example.com>\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMdText(t *testing.T) {
	cases := map[string]string{
		"plain":           "plain",
		"a|b":             `a\|b`,
		"<x>&":            "&lt;x&gt;&amp;",
		"# head":          `\# head`,
		"- item":          `\- item`,
		"12. x":           `12\. x`,
		"x_y*z`w":         "x\\_y\\*z\\`w",
		"line\nbreak":     "line break",
		"  lead":          "lead",
		"[a](b)":          `\[a\](b)`,
		"esc\x1b[31mred":  `esc\[31mred`,
		"1.5 ms is fine.": "1.5 ms is fine.",
	}
	for in, want := range cases {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatting(t *testing.T) {
	cases := []struct{ got, want string }{
		{fmtPct(0.5038), "50.4%"},
		{fmtPct(-0.00001), "0.0%"},
		{fmtDur(3.25), "3.2 µs"},
		{fmtDur(40620.16), "40.62 ms"},
		{fmtMS(812403.25), "812.40 ms"},
		{fmtBytes(1610612736), "1.50 GiB"},
		{fmtBytes(512), "512 B"},
		{fmtUnit(80, "count"), "80"},
		{fmtUnit(6, "per_step"), "6.00 / step"},
		{fmtUnit(1, "widgets"), "1.000 widgets"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestJSONFloatMatchesEncodingJSON(t *testing.T) {
	for _, x := range []float64{0, 1, -2.5, 0.1, 1e-7, 1.5e-9, 1712345678901234.5, 1e21, 123456789e20, 0.2403} {
		want, _ := json.Marshal(x)
		got, _ := json.Marshal(jsonFloat(x))
		if string(got) != string(want) {
			t.Errorf("%v: got %s, want %s", x, got, want)
		}
	}
}

func TestHTMLSelfContained(t *testing.T) {
	for _, fx := range fixtures {
		out := string(render(t, HTML, fx.make()))
		lower := strings.ToLower(out)
		for _, bad := range []string{"<script", " src=", "<link", "@import", "url(", "@font-face", "<iframe", "<object"} {
			if strings.Contains(lower, bad) {
				t.Errorf("%s: HTML contains %q", fx.name, bad)
			}
		}
		for _, need := range []string{`<meta name="viewport"`, "@media print", "max-width:", "Content-Security-Policy"} {
			if !strings.Contains(out, need) {
				t.Errorf("%s: HTML lacks %q", fx.name, need)
			}
		}
		// Every chart has a text alternative.
		if n, m := strings.Count(out, "<svg "), strings.Count(out, `role="img" aria-labelledby=`); n != m {
			t.Errorf("%s: %d charts, %d with text alternatives", fx.name, n, m)
		}
		if strings.Count(out, "<svg ") != strings.Count(out, "<desc id=") {
			t.Errorf("%s: chart without <desc>", fx.name)
		}
	}
	gpu := string(render(t, HTML, gpuTraining()))
	if n := strings.Count(gpu, "<svg "); n != 6 {
		t.Errorf("GPU trace has %d charts, want timeline, step time, breakdown, kernels, roofline and ops", n)
	}
	if cpu := string(render(t, HTML, cpuOnly())); strings.Contains(cpu, "<svg ") {
		t.Error("CPU-only trace without steps should have no charts")
	}
	if rep := string(render(t, HTML, repaired())); !strings.Contains(rep, `class="banner" role="alert">This trace was repaired; figures may be partial.`) {
		t.Error("repaired banner missing")
	}
}

// TestWriteFileProcPipe: a path the kernel resolves to a pipe through a
// magic link (/dev/stdout -> /proc/self/fd/1 -> pipe:[N], whose readlink
// is no path) is written through, not replaced by a rename.
func TestWriteFileProcPipe(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("skipping: no /proc/self/fd on this system")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	path := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	err = WriteFile(path, func(out io.Writer) error {
		_, err := io.WriteString(out, "report\n")
		return err
	})
	w.Close()
	if err != nil {
		t.Fatalf("WriteFile(%s): %v", path, err)
	}
	if b := <-got; string(b) != "report\n" {
		t.Errorf("the pipe read %q", b)
	}
}
