package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
)

//go:embed report.html.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"sevLabel": severityLabel,
	"clean":    clean,
	"webURL":   isWebURL,
	"inc":      func(i int) int { return i + 1 },
	"nullMark": func() string { return nullMark },
	"nullNote": func() string { return nullNote },
	"offset":   offsetText,
	"sevClass": func(s string) string {
		switch s {
		case "high", "medium", "low", "info":
			return "sev-" + s
		}
		return "sev-unknown"
	},
}).Parse(htmlTemplateText))

// htmlPage is what the template renders.
type htmlPage struct {
	Traces []htmlTrace
	Many   bool
	Ranks  []rankRow // per-rank table when ranks were analyzed together
	// RanksTotal counts every rank; RanksHidden says which ranks the
	// table and the sections leave out ("" when none).
	RanksTotal  int
	RanksHidden string
	// RanksStraggler is the job's headline when one rank paces the others.
	RanksStraggler string
	// RanksSpread names the columns that mark no rank (rankFocus.Spread).
	RanksSpread string
	Notes       []string
	Skipped     []engine.Skipped
	About       aboutView
	// RuleErrors are the failed rules; RuleErrorsHeading introduces them.
	RuleErrors        []ruleErrorView
	RuleErrorsHeading string
	// Baseline is the --baseline comparison, or nil.
	Baseline *baselineView
	// Docs, when several traces are shown, holds each rule doc once; the
	// findings link to it (DocRef) instead of repeating it per rank.
	Docs []htmlDoc
}

type htmlDoc struct {
	ID, Rule, Title string
	HTML            template.HTML
}

type htmlTrace struct {
	traceView
	Findings  []htmlFinding
	GPUChart  *barChart // busy vs idle, when there is no timeline
	StepChart *barChart

	Series         seriesView
	TimelineChart  *svgChart
	BreakdownChart *svgChart
	KernelChart    *svgChart
	OpChart        *svgChart
	RooflineChart  *svgChart
	// MemoryCharts holds one curve per device of Series.Memory (none on a
	// page of several traces: the tables stay).
	MemoryCharts []*svgChart
	// FactRows are the facts the page lists: all of them for one trace;
	// none with several (the JSON report and each rank alone have them).
	FactRows []factRow
	StepRows []stepRow // the breakdown chart's text alternative
}

type htmlFinding struct {
	OfTime string // "of step time" or "of the window"
	findingView
	DocHTML     template.HTML
	DocRef      string // id of the doc in htmlPage.Docs (several traces)
	ImpactWidth string // impact bar width, percent of the track (0..100)
}

// barChart is a horizontal bar chart laid out for an inline SVG with a
// viewBox of Width x Height. Numbers are preformatted for determinism.
type barChart struct {
	ID     string // unique per page, for aria-labelledby
	Title  string
	Desc   string // text alternative
	Height string
	Bars   []bar
}

type bar struct {
	Label  string
	Value  string
	Y      string // top of the bar
	TextY  string
	W      string // bar width in viewBox units
	Class  string
	X      string // left edge of the bar
	ValueX string // where the value label starts
}

const (
	chartWidth  = 600.0
	chartLabelW = 90.0  // left column for bar labels
	chartValueW = 110.0 // right column for values
	barH        = 22.0
	barGap      = 8.0
)

// HTML writes r as one self-contained HTML5 file: inline CSS (with print
// and narrow-screen rules), a Content-Security-Policy that forbids scripts
// and network loads, no <script>, no external fonts, images or stylesheets
// (references are plain hyperlinks). Per trace it shows the header (input,
// device, rank, steps, window in ms), a verdict line, a "repaired" banner
// when the reader repaired the input, inline SVG charts with text
// alternatives (GPU busy vs idle share of the window; step time mean, p50,
// p90 and max), ranked findings with evidence, example events and the rule
// doc rendered from Markdown (goldmark, raw HTML off), all facts ("—" when
// not measured), rules not evaluated with hints, and trace health with every
// diagnostic. With several traces (ranks) each trace is a collapsed
// section under the summary and rank tables, and each rule doc is printed
// once at the end, linked from every finding of that rule. The footer names the stepdoctor version, command line and
// rule pack. Every string from a trace is HTML-escaped by html/template.
func HTML(w io.Writer, r *engine.Result) error {
	if r == nil {
		return fmt.Errorf("render html: %w", errNilResult)
	}
	foc := focusRanks(r, rankTable(r))
	views := shownViews(buildViews(r), foc)
	page := htmlPage{Many: len(views) > 1 || foc.Hidden > 0, Ranks: foc.Rows, RanksTotal: len(foc.Rows) + foc.Hidden, RanksHidden: foc.HiddenLine(), RanksStraggler: foc.Straggler, RanksSpread: foc.Spread, Notes: r.Notes, Skipped: r.Skipped, About: buildAbout(r.About), RuleErrors: ruleErrorViews(r), Baseline: buildBaseline(r)}
	page.RuleErrorsHeading = ruleErrorsHeading(len(page.RuleErrors))
	docSeen := map[string]bool{}
	for _, v := range views {
		ht := htmlTrace{traceView: v}
		for _, f := range v.Findings {
			hf := htmlFinding{findingView: f, ImpactWidth: fixed(clamp01(f.ImpactRatio)*100, 1), OfTime: v.OfTime}
			if strings.TrimSpace(f.Doc) != "" {
				id := "rule-doc-" + f.Rule
				if page.Many && docSeen[f.Rule] {
					hf.DocRef = id
				} else {
					doc, err := renderDoc(f.Doc)
					if err != nil {
						return fmt.Errorf("render html: %w", err)
					}
					if page.Many {
						docSeen[f.Rule] = true
						page.Docs = append(page.Docs, htmlDoc{ID: id, Rule: f.Rule, Title: f.Title, HTML: doc})
						hf.DocRef = id
					} else {
						hf.DocHTML = doc
					}
				}
			}
			ht.Findings = append(ht.Findings, hf)
		}
		ht.Series = v.Series
		ht.TimelineChart = timelineChart(v.Index, v.Series)
		if ht.TimelineChart == nil {
			ht.GPUChart = gpuChart(v)
		}
		ht.StepChart = stepChart(v)
		ht.BreakdownChart = stepBreakdownChart(v.Index, v.Series)
		if ht.BreakdownChart != nil {
			ht.StepRows = v.Series.StepRows
		}
		ht.FactRows = v.Facts
		if page.Many {
			// One section per rank: keep each readable and the page small.
			// The kernel and operator tables show what their bar charts
			// would, and the JSON report has every fact and row.
			ht.Series.KernelRows = ht.Series.KernelRows[:min(len(ht.Series.KernelRows), manyTopRows)]
			ht.Series.OpRows = ht.Series.OpRows[:min(len(ht.Series.OpRows), manyTopRows)]
			ht.Series.Labels = ht.Series.Labels[:min(len(ht.Series.Labels), manyTopRows)]
			ht.Series.Modules = ht.Series.Modules[:min(len(ht.Series.Modules), manyTopRows)]
			ht.FactRows = nil            // per-rank facts: the JSON report, or this rank analyzed alone
			if len(v.Series.Steps) < 2 { // one bar: the role table says the same
				ht.BreakdownChart = nil
			}
			for k := range ht.Findings {
				f := &ht.Findings[k]
				f.Examples = f.Examples[:min(len(f.Examples), manyExamples)]
			}
		} else {
			ht.KernelChart = kernelChart(v.Index, v.Series)
			ht.OpChart = opChart(v.Index, v.Series)
			ht.RooflineChart = rooflineChart(v.Index, v.Series)
			for k, m := range v.Series.Memory {
				if c := memoryChart(fmt.Sprintf("memory-%d-%d", v.Index, k), m); c != nil {
					ht.MemoryCharts = append(ht.MemoryCharts, c)
				}
			}
		}
		page.Traces = append(page.Traces, ht)
	}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("execute html template: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// gpuChart is one stacked bar: busy then idle share of the window.
func gpuChart(v traceView) *barChart {
	if v.GPUBusy == nil && v.GPUIdle == nil {
		return nil
	}
	var busy, idle float64
	switch {
	case v.GPUBusy != nil && v.GPUIdle != nil:
		busy, idle = *v.GPUBusy, *v.GPUIdle
	case v.GPUBusy != nil:
		busy, idle = *v.GPUBusy, 1-*v.GPUBusy
	default:
		busy, idle = 1-*v.GPUIdle, *v.GPUIdle
	}
	busy, idle = clamp01(busy), clamp01(idle)
	span := chartWidth
	bw := busy * span
	c := &barChart{
		ID:     fmt.Sprintf("gpu-%d", v.Index),
		Title:  "GPU busy vs idle",
		Desc:   fmt.Sprintf("Over the %s analysis window the GPU was busy %s and idle %s of the time.", v.Window, fmtPct(busy), fmtPct(idle)),
		Height: fixed(barH+24, 0),
		Bars: []bar{
			{Label: "busy " + fmtPct(busy), X: "0", W: fixed(bw, 1), Y: "0", TextY: fixed(barH+16, 0), Class: "busy"},
			{Label: "idle " + fmtPct(idle), X: fixed(bw, 1), W: fixed(span-bw, 1), Y: "0", TextY: fixed(barH+16, 0), Class: "idle"},
		},
	}
	return c
}

// stepChart shows step-time statistics as horizontal bars scaled to max.
func stepChart(v traceView) *barChart {
	s := v.Step
	if s == nil {
		return nil
	}
	rows := []struct {
		label string
		val   float64
	}{{"mean", s.Mean}, {"p50", s.P50}, {"p90", s.P90}, {"max", s.Max}}
	scale := s.Max
	for _, r := range rows {
		scale = max(scale, r.val)
	}
	span := chartWidth - chartLabelW - chartValueW
	c := &barChart{
		ID:    fmt.Sprintf("step-%d", v.Index),
		Title: "Step time",
		Desc: fmt.Sprintf("Step time over %s: mean %s, p50 %s, p90 %s, max %s.",
			stepCount(v.Steps), fmtDur(s.Mean), fmtDur(s.P50), fmtDur(s.P90), fmtDur(s.Max)),
		Height: fixed(float64(len(rows))*(barH+barGap), 0),
	}
	for i, r := range rows {
		w := 0.0
		if scale > 0 && !isBad(r.val) && r.val > 0 {
			w = r.val / scale * span
		}
		y := float64(i) * (barH + barGap)
		c.Bars = append(c.Bars, bar{
			Label:  r.label,
			Value:  fmtDur(r.val),
			X:      fixed(chartLabelW, 0),
			Y:      fixed(y, 0),
			TextY:  fixed(y+barH*0.72, 1),
			W:      fixed(w, 1),
			ValueX: fixed(chartLabelW+w+6, 1),
			Class:  "step",
		})
	}
	return c
}

func clamp01(x float64) float64 {
	if isBad(x) || x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

// manyTopRows caps the kernel and operator tables of each trace on a page
// of several traces.
const manyTopRows = 5

// manyExamples caps the example events of each finding on a page of
// several traces.
const manyExamples = 3
