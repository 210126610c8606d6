package reports

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// A single hostile trace draws its memory curve: every trace string in
// the chart (device, operator, step names) and in the memory, label and
// module tables is escaped.
func TestHTMLEscapesMemoryAndLabels(t *testing.T) {
	r := hostile()
	r.Traces = r.Traces[:1]
	out := string(render(t, HTML, r))
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "<img", "onerror=\""} {
		if strings.Contains(lower, bad) {
			i := strings.Index(lower, bad)
			t.Errorf("HTML contains %q: ...%s...", bad, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	if !strings.Contains(out, `class="chart-memory"`) || !strings.Contains(out, "<polyline") {
		t.Error("no memory chart")
	}
	for _, want := range []string{"peak 2.00 KiB at &#43;5.0 µs in &lt;script&gt;", "<h3>Labels and modules</h3>", "&lt;img src=x onerror=alert(1)&gt;/&lt;script&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	md := string(render(t, Markdown, r))
	if strings.Contains(md, "<script") || strings.Contains(md, "<img") {
		t.Error("Markdown carries raw markup")
	}
}

// The curve is drawn as steps: each sample holds until the next, the last
// until the end of the x range; the peak marker sits on the peak sample.
func TestMemoryChartSteps(t *testing.T) {
	v := buildMemory(&facts.Facts{Memory: []facts.MemoryDevice{{Device: "GPU 0", PeakAllocatedBytes: 200, PeakOffsetUS: 50, AllocatedKnown: true,
		Curve: []facts.MemoryPoint{{OffsetUS: 0, AllocatedBytes: 100}, {OffsetUS: 50, AllocatedBytes: 200}, {OffsetUS: 100, AllocatedBytes: 50}}}}})
	c := memoryChart("m", v[0])
	if c == nil || len(c.Polylines) != 1 {
		t.Fatalf("chart %+v", c)
	}
	// x: 76 + us/100*564; y: 182 - b/200*160.
	if got, want := c.Polylines[0].Points, "76.0,102.0 358.0,102.0 358.0,22.0 640.0,22.0 640.0,142.0"; got != want {
		t.Errorf("points %s, want %s", got, want)
	}
	peak := c.Marks[0]
	if peak.Class != "m-peak" || peak.X != "354.5" || peak.Y != "18.5" {
		t.Errorf("peak marker %+v", peak)
	}
	if !strings.Contains(c.Desc, "GPU 0: allocated memory peaks at 200 B at +50.0 µs") {
		t.Errorf("desc %q", c.Desc)
	}
}
