package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Layout of the series charts, in SVG user units. Every chart is chartW
// wide; the page scales it to the column width, and a narrow-screen CSS rule
// enlarges the text so it stays readable on a phone.
const (
	chartW          = 640.0
	maxStepColumns  = 120  // steps drawn in the per-step chart
	maxTimelineRect = 2000 // timeline spans drawn before bucketing
	timelineBuckets = 1280 // buckets when a timeline has more spans
	topBars         = 10   // bars in the top-kernel and top-op charts
	barLabelRunes   = 72   // name runes in a bar label
)

// svgChart is a chart laid out for an inline SVG with a viewBox of W x H.
// All numbers are preformatted (fixed precision) so output is
// deterministic; all strings are escaped by html/template.
type svgChart struct {
	ID    string // unique per page, for aria-labelledby
	Title string
	Desc  string // text alternative
	W, H  string
	Class string // extra class on the <svg>
	Rects []svgRect
	Lines []svgLine
	// Polylines are drawn after the rectangles (curves over shading).
	Polylines []svgPolyline
	Marks     []svgRect // drawn over the polylines
	Texts     []svgText
	Legend    []legendItem
	Note      string // shown under the chart, e.g. "first 120 of 300 steps"
}

type svgRect struct {
	X, Y, W, H string
	Class      string
	Tip        string // <title> tooltip, "" for none
}

type svgLine struct{ X1, Y1, X2, Y2 string }

// svgPolyline is a line through Points ("x,y x,y ..."), styled by Class.
type svgPolyline struct{ Class, Points string }

type svgText struct {
	X, Y   string
	Anchor string // "", "middle" or "end"
	Class  string
	Text   string
}

type legendItem struct {
	Class string
	Label string
	Value string
}

func num(x float64) string { return fixed(x, 1) }

// stepBreakdownChart stacks each step's role times bottom-up in
// facts.Roles order, scaled to the longest step.
func stepBreakdownChart(idx int, s seriesView) *svgChart {
	if len(s.Steps) == 0 || len(s.StepRoles) == 0 {
		return nil
	}
	steps := s.Steps
	c := &svgChart{ID: fmt.Sprintf("steps-%d", idx), Title: "Per-step time breakdown", Class: "chart-steps"}
	if len(steps) > maxStepColumns {
		c.Note = fmt.Sprintf("Showing the first %d of %d steps; the table lists all.", maxStepColumns, len(steps))
		steps = steps[:maxStepColumns]
	}
	var top float64
	for _, st := range steps {
		top = max(top, stackHeight(st))
	}
	if top <= 0 {
		return nil
	}
	const (
		plotTop = 20.0
		plotBot = 180.0
	)
	const gutter = 76.0 // y-axis labels
	plotH := plotBot - plotTop
	for _, g := range []float64{0, 0.5, 1} {
		y := plotBot - g*plotH
		c.Lines = append(c.Lines, svgLine{X1: num(gutter), Y1: num(y), X2: num(chartW), Y2: num(y)})
		c.Texts = append(c.Texts, svgText{X: num(gutter - 6), Y: num(y + 4), Anchor: "end", Class: "axis", Text: fmtAxis(top * g)})
	}
	slot := (chartW - gutter) / float64(len(steps))
	bw := slot * 0.78
	if slot-bw > 12 {
		bw = slot - 12
	}
	every := int(math.Ceil(float64(len(steps)) / 8))
	for i, st := range steps {
		x := gutter + float64(i)*slot + (slot-bw)/2
		y := plotBot
		for _, rt := range s.StepRoles {
			us := nonNeg(st.RolesUS[rt.Role])
			if us <= 0 {
				continue
			}
			h := us / top * plotH
			y -= h
			c.Rects = append(c.Rects, svgRect{
				X: num(x), Y: fixed(y, 2), W: num(bw), H: fixed(h, 2), Class: roleClass(rt.Role),
				Tip: fmt.Sprintf("%s: %s %s", stepLabel(st.Name, i), roleLabel(rt.Role), fmtDur(us)),
			})
		}
		if i%every == 0 {
			c.Texts = append(c.Texts, svgText{X: num(gutter + float64(i)*slot + slot/2), Y: num(plotBot + 16), Anchor: "middle", Class: "axis", Text: stepLabel(st.Name, i)})
		}
	}
	c.W, c.H = num(chartW), num(plotBot+22)
	var shares []string
	for _, rt := range s.RoleRows {
		c.Legend = append(c.Legend, legendItem{Class: rt.Class, Label: rt.Label, Value: rt.Share})
		shares = append(shares, fmt.Sprintf("%s %s (%s per step)", rt.Label, rt.Share, rt.PerStep))
	}
	c.Desc = fmt.Sprintf("Stacked bars, one per step (%s, longest %s). Share of step time: %s.",
		stepCount(len(s.Steps)), fmtDur(top), strings.Join(shares, ", "))
	return c
}

func stackHeight(st facts.StepBreakdown) float64 {
	var sum float64
	for _, us := range st.RolesUS {
		sum += nonNeg(us)
	}
	return max(sum, nonNeg(st.DurUS))
}

// stepLabel turns "ProfilerStep#12" into "#12"; other names are shortened.
func stepLabel(name string, i int) string {
	if _, n, ok := strings.Cut(name, "#"); ok && n != "" {
		return "#" + shortName(n, 8)
	}
	if name == "" {
		return "step " + strconv.Itoa(i+1)
	}
	return shortName(name, 12)
}

// timelineChart draws the primary GPU over the window: busy spans and idle
// gaps coloured by cause.
func timelineChart(idx int, s seriesView) *svgChart {
	if len(s.Timeline) == 0 || s.WindowUS <= 0 {
		return nil
	}
	const (
		stripY = 4.0
		stripH = 40.0
	)
	c := &svgChart{ID: fmt.Sprintf("timeline-%d", idx), Title: "GPU timeline", Class: "chart-timeline"}
	c.Rects = append(c.Rects, svgRect{X: "0", Y: num(stripY), W: num(chartW), H: num(stripH), Class: "r-none"})
	scale := chartW / s.WindowUS
	if len(s.Timeline) <= maxTimelineRect {
		for _, sp := range s.Timeline {
			w := nonNeg(sp.DurUS) * scale
			if w <= 0 {
				continue
			}
			c.Rects = append(c.Rects, svgRect{
				X: fixed(nonNeg(sp.OffsetUS)*scale, 2), Y: num(stripY), W: fixed(w, 2), H: num(stripH), Class: roleClass(sp.Kind),
				Tip: fmt.Sprintf("%s: %s at +%s", roleLabel(sp.Kind), fmtDur(sp.DurUS), fmtDur(sp.OffsetUS)),
			})
		}
	} else {
		c.Note = fmt.Sprintf("%d spans drawn as %d slices, each coloured by what filled most of it.", len(s.Timeline), timelineBuckets)
		for _, b := range bucketTimeline(s.Timeline, s.WindowUS, timelineBuckets) {
			c.Rects = append(c.Rects, svgRect{X: fixed(b.x*chartW, 2), Y: num(stripY), W: fixed(b.w*chartW, 2), H: num(stripH), Class: roleClass(b.kind)})
		}
	}
	for _, g := range []float64{0, 0.5, 1} {
		anchor := "middle"
		switch g {
		case 0:
			anchor = ""
		case 1:
			anchor = "end"
		}
		c.Texts = append(c.Texts, svgText{X: num(g * chartW), Y: num(stripY + stripH + 16), Anchor: anchor, Class: "axis", Text: fmtAxis(g * s.WindowUS)})
	}
	c.W, c.H = num(chartW), num(stripY+stripH+22)
	c.Legend = append(c.Legend, legendItem{Class: "r-busy", Label: "busy", Value: s.Busy})
	parts := []string{"busy " + s.Busy}
	for _, ic := range s.Idle {
		c.Legend = append(c.Legend, legendItem{Class: ic.Class, Label: "idle: " + ic.Label, Value: ic.Share})
		parts = append(parts, fmt.Sprintf("idle waiting on %s %s", ic.Label, ic.Share))
	}
	c.Desc = fmt.Sprintf("The primary GPU over the %s window: %s.", s.Window, strings.Join(parts, ", "))
	return c
}

type bucket struct {
	x, w float64 // 0..1 of the window
	kind string
}

// bucketTimeline splits the window into n equal slices and gives each the
// kind that covers most of it; neighbouring slices of one kind merge.
func bucketTimeline(spans []facts.TimelineSpan, window float64, n int) []bucket {
	cover := make([]map[string]float64, n)
	width := window / float64(n)
	for _, sp := range spans {
		start, end := nonNeg(sp.OffsetUS), nonNeg(sp.OffsetUS)+nonNeg(sp.DurUS)
		for i := int(start / width); i < n && float64(i)*width < end; i++ {
			lo, hi := max(start, float64(i)*width), min(end, float64(i+1)*width)
			if hi <= lo {
				continue
			}
			if cover[i] == nil {
				cover[i] = map[string]float64{}
			}
			cover[i][sp.Kind] += hi - lo
		}
	}
	var out []bucket
	for i, m := range cover {
		if len(m) == 0 {
			continue
		}
		best, bestUS := "", -1.0
		for _, k := range knownFirst(append([]string{"busy"}, facts.IdleCauses...), m) {
			if m[k] > bestUS {
				best, bestUS = k, m[k]
			}
		}
		x := float64(i) / float64(n)
		if l := len(out) - 1; l >= 0 && out[l].kind == best && math.Abs(out[l].x+out[l].w-x) < 1e-9 {
			out[l].w += 1 / float64(n)
			continue
		}
		out = append(out, bucket{x: x, w: 1 / float64(n), kind: best})
	}
	return out
}

// hbar is one bar of a top-N chart.
type hbar struct {
	label string
	value float64
	text  string
}

// topBarChart lays out up to topBars bars, each with its label above it and
// its value after it, scaled to the largest value.
func topBarChart(id, title, desc, class string, bars []hbar) *svgChart {
	if len(bars) == 0 {
		return nil
	}
	if len(bars) > topBars {
		bars = bars[:topBars]
	}
	var top float64
	for _, b := range bars {
		top = max(top, nonNeg(b.value))
	}
	const (
		rowH   = 38.0
		barY   = 18.0
		barH   = 14.0
		valueW = 170.0
	)
	c := &svgChart{ID: id, Title: title, Desc: desc, Class: "chart-top"}
	span := chartW - valueW
	for i, b := range bars {
		y := float64(i) * rowH
		w := 0.0
		if top > 0 {
			w = nonNeg(b.value) / top * span
		}
		c.Texts = append(c.Texts, svgText{X: "0", Y: num(y + 13), Class: "label", Text: shortName(b.label, barLabelRunes)})
		c.Rects = append(c.Rects, svgRect{X: "0", Y: num(y + barY), W: num(max(w, 1)), H: num(barH), Class: class, Tip: clean(b.label)})
		c.Texts = append(c.Texts, svgText{X: num(max(w, 1) + 6), Y: num(y + barY + 11.5), Class: "value", Text: b.text})
	}
	c.W, c.H = num(chartW), num(float64(len(bars))*rowH)
	return c
}

func kernelChart(idx int, s seriesView) *svgChart {
	if len(s.TopKernels) == 0 {
		return nil
	}
	var bars []hbar
	var parts []string
	for i, k := range s.KernelRows {
		share := ""
		if s.KernelTotalUS > 0 {
			share = " · " + k.Share
		}
		bars = append(bars, hbar{label: k.Name, value: k.TotalUS, text: k.Total + share})
		if i < 5 {
			parts = append(parts, fmt.Sprintf("%s %s over %d calls", shorten(k.Name, 60), k.Total, k.Count))
		}
	}
	desc := fmt.Sprintf("Bars of total GPU time for the top %d kernels by name. Largest: %s.", min(len(bars), topBars), strings.Join(parts, "; "))
	return topBarChart(fmt.Sprintf("kernels-%d", idx), "Top kernels by GPU time", desc, "r-kernel", bars)
}

func opChart(idx int, s seriesView) *svgChart {
	if len(s.TopOps) == 0 {
		return nil
	}
	var bars []hbar
	var parts []string
	for i, o := range s.OpRows {
		bars = append(bars, hbar{label: o.Name, value: o.SelfCPUUS, text: o.SelfCPU + " · " + strconv.FormatInt(o.Calls, 10) + " calls"})
		if i < 5 {
			parts = append(parts, fmt.Sprintf("%s %s self over %d calls", shorten(o.Name, 60), o.SelfCPU, o.Calls))
		}
	}
	desc := fmt.Sprintf("Bars of self CPU time for the top %d operators. Largest: %s.", min(len(bars), topBars), strings.Join(parts, "; "))
	return topBarChart(fmt.Sprintf("ops-%d", idx), "Top CPU operators by self time", desc, "r-cpuop", bars)
}

// fmtAxis is fmtDur except that zero is "0".
func fmtAxis(us float64) string {
	if us == 0 {
		return "0"
	}
	return fmtDur(us)
}

// rooflineChart plots the modelled ops (achieved FLOP/s against
// arithmetic intensity, log-log) under the device's roofline:
// min(peak FLOP/s, intensity x memory bandwidth). Nil without ops or a
// known device.
func rooflineChart(idx int, s seriesView) *svgChart {
	if len(s.RooflineOps) == 0 || s.RoofFLOPS <= 0 || s.RoofBW <= 0 {
		return nil
	}
	const (
		w, h                     = 640.0, 320.0
		left, right, top, bottom = 64.0, 16.0, 12.0, 36.0
	)
	ridge := s.RoofFLOPS / s.RoofBW
	xlo, xhi := ridge, ridge
	ylo, yhi := s.RoofFLOPS, s.RoofFLOPS
	for _, op := range s.RooflineOps {
		xlo, xhi = math.Min(xlo, op.Intensity), math.Max(xhi, op.Intensity)
		ylo, yhi = math.Min(ylo, op.FLOPSPerS), math.Max(yhi, op.FLOPSPerS)
	}
	xlo, xhi = math.Pow(10, math.Floor(math.Log10(xlo))), math.Pow(10, math.Ceil(math.Log10(xhi*1.01)))
	ylo, yhi = math.Pow(10, math.Floor(math.Log10(ylo))), math.Pow(10, math.Ceil(math.Log10(yhi*1.01)))
	px := func(x float64) float64 {
		return left + (math.Log10(x)-math.Log10(xlo))/(math.Log10(xhi)-math.Log10(xlo))*(w-left-right)
	}
	py := func(y float64) float64 {
		return h - bottom - (math.Log10(y)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo))*(h-top-bottom)
	}
	c := &svgChart{
		ID: fmt.Sprintf("roofline-%d", idx), Title: "Roofline: achieved FLOP/s of the modelled ops",
		W: num(w), H: num(h), Class: "roofline",
	}
	// The roof: the bandwidth slope up to the ridge point, then the peak.
	x0 := math.Max(xlo, ylo/s.RoofBW)
	c.Lines = append(c.Lines,
		svgLine{X1: num(px(x0)), Y1: num(py(x0 * s.RoofBW)), X2: num(px(ridge)), Y2: num(py(s.RoofFLOPS))},
		svgLine{X1: num(px(ridge)), Y1: num(py(s.RoofFLOPS)), X2: num(px(xhi)), Y2: num(py(s.RoofFLOPS))},
		svgLine{X1: num(left), Y1: num(h - bottom), X2: num(w - right), Y2: num(h - bottom)},
		svgLine{X1: num(left), Y1: num(top), X2: num(left), Y2: num(h - bottom)},
	)
	for x := xlo; x <= xhi*1.0001; x *= 10 {
		c.Texts = append(c.Texts, svgText{X: num(px(x)), Y: num(h - bottom + 16), Anchor: "middle", Class: "axis", Text: fmtSI(x, "")})
	}
	for y := ylo; y <= yhi*1.0001; y *= 10 {
		c.Texts = append(c.Texts, svgText{X: num(left - 6), Y: num(py(y) + 4), Anchor: "end", Class: "axis", Text: fmtSI(y, "")})
	}
	c.Texts = append(c.Texts,
		svgText{X: num((left + w - right) / 2), Y: num(h - 4), Anchor: "middle", Class: "axis", Text: "arithmetic intensity (FLOP per byte)"},
		svgText{X: num(w - right), Y: num(py(s.RoofFLOPS) - 6), Anchor: "end", Class: "axis", Text: fmtSI(s.RoofFLOPS, "FLOP/s") + " peak"},
	)
	var parts []string
	for i, op := range s.RooflineOps {
		const side = 8.0
		tip := fmt.Sprintf("%s %s %s: %s at %s FLOP/B", clean(op.Name), shorten(clean(op.Shapes), 80), clean(op.DType), fmtSI(op.FLOPSPerS, "FLOP/s"), fixed(op.Intensity, 1))
		if op.PeakRatio != nil {
			tip += fmt.Sprintf(" (%s of the %s peak)", fmtPct(*op.PeakRatio), clean(op.PeakDType))
		}
		c.Rects = append(c.Rects, svgRect{X: num(px(op.Intensity) - side/2), Y: num(py(op.FLOPSPerS) - side/2), W: num(side), H: num(side), Class: "r-kernel", Tip: tip})
		if i < 3 {
			parts = append(parts, tip)
		}
	}
	c.Desc = fmt.Sprintf("Each square is one modelled operator shape (%d), at its achieved FLOP/s against its arithmetic intensity, under the roofline of %s (peak %s, memory %s). Top by kernel time: %s.",
		len(s.RooflineOps), clean(s.RoofName), fmtSI(s.RoofFLOPS, "FLOP/s"), fmtSI(s.RoofBW, "B/s"), strings.Join(parts, "; "))
	return c
}

// fmtSI formats x with an SI prefix (k, M, G, T, P) and unit.
func fmtSI(x float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for x >= 1000 && i < len(prefixes)-1 {
		x /= 1000
		i++
	}
	v := strconv.FormatFloat(x, 'g', 3, 64)
	if unit == "" {
		return v + prefixes[i]
	}
	return v + " " + prefixes[i] + unit
}
