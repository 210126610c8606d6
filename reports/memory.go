package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// topLabels is how many record_function labels and nn.Modules every
// format lists.
const topLabels = 15

// memoryView is one device's memory (facts.MemoryDevice) formatted once
// for every renderer. Strings from the trace are cleaned, not escaped.
type memoryView struct {
	Device        string // "GPU 0", "CPU"
	Events        int64
	Peak          string // allocated bytes at the peak
	PeakAt        string // "+34.35 ms" from the window start
	PeakOp        string // the operator at the peak; nullMark when none
	Reserved      string // Total Reserved at the peak; nullMark without
	Fragmentation string // (reserved - allocated) / reserved at the peak; nullMark without
	MaxReserved   string
	AllocsPerStep string // nullMark without steps
	// Summary is the device in one sentence, the same in every format.
	Summary string
	// StartNote says, in the 2021 format, that the start value is unknown
	// and the values are lower bounds; "" otherwise.
	StartNote string
	Steps     []memStepRow

	curve       []facts.MemoryPoint
	steps       []facts.MemoryStep
	hasReserved bool
	peakBytes   int64
	peakOffset  float64
}

// memStepRow is one step of a device's memory table.
type memStepRow struct {
	Label        string
	Allocs       int64
	Peak, AtEnd  string
	PeakBytesRaw int64
}

// labelRow is one record_function label or nn.Module, formatted.
type labelRow struct {
	Name    string // the label, or the module's path
	Depth   int    // modules: enclosing modules
	Calls   int64
	CPU     string // host time (union of its spans in W)
	PerStep string // host time per step; nullMark without steps
	Share   string // host time / |W|
	GPU     string // kernel time launched inside
	Kernels int64
	GPUSpan string // gpu_user_annotation union; nullMark without
}

// memoryStartNote explains allocated bytes of the 2021 [memory] format.
const memoryStartNote = "the trace's [memory] events have no Total Allocated (2021 format): allocated memory is the running sum of Bytes from the trace's start, raised so that it never goes below zero; what was allocated before the trace began is unknown, so these values are lower bounds"

// buildMemory formats f.Memory.
func buildMemory(f *facts.Facts) []memoryView {
	var out []memoryView
	for _, m := range f.Memory {
		v := memoryView{
			Device: clean(m.Device), Events: m.Events, Peak: fmtBytes(float64(m.PeakAllocatedBytes)),
			PeakAt: signedOffset(m.PeakOffsetUS), PeakOp: nullMark, Reserved: nullMark, Fragmentation: nullMark,
			MaxReserved: nullMark, AllocsPerStep: nullMark,
			curve: m.Curve, steps: m.Steps, hasReserved: m.HasReserved, peakBytes: m.PeakAllocatedBytes, peakOffset: m.PeakOffsetUS,
		}
		if m.PeakOp != "" {
			v.PeakOp = clean(m.PeakOp)
		}
		if m.PeakReservedBytes != nil {
			v.Reserved = fmtBytes(float64(*m.PeakReservedBytes))
		}
		if m.FragmentationRatio != nil {
			v.Fragmentation = fmtPct(*m.FragmentationRatio)
		}
		if m.MaxReservedBytes != nil {
			v.MaxReserved = fmtBytes(float64(*m.MaxReservedBytes))
		}
		if m.AllocsPerStep != nil {
			v.AllocsPerStep = fixed(*m.AllocsPerStep, 2)
		}
		if !m.AllocatedKnown {
			v.StartNote = memoryStartNote
		}
		s := v.Device + ": allocated memory peaks at " + v.Peak
		if !m.AllocatedKnown {
			s += " or more"
		}
		s += " at " + v.PeakAt
		if m.PeakOp != "" {
			s += " in " + shorten(v.PeakOp, 80)
		}
		if m.PeakReservedBytes != nil {
			s += "; " + v.Reserved + " reserved there"
			if m.FragmentationRatio != nil {
				s += " (" + v.Fragmentation + " cached but unallocated)"
			}
		}
		if m.AllocsPerStep != nil {
			s += "; " + v.AllocsPerStep + " allocations per step"
		}
		v.Summary = s
		for k, st := range m.Steps {
			v.Steps = append(v.Steps, memStepRow{Label: stepLabel(st.Step, k), Allocs: st.Allocs,
				Peak: fmtBytes(float64(st.PeakAllocatedBytes)), AtEnd: fmtBytes(float64(st.EndAllocatedBytes)), PeakBytesRaw: st.PeakAllocatedBytes})
		}
		out = append(out, v)
	}
	return out
}

// signedOffset formats an offset from the window start: "+12.34 ms", or
// "-1.2 µs" before it.
func signedOffset(us float64) string {
	if us < 0 {
		return "-" + fmtDur(-us)
	}
	return "+" + fmtDur(us)
}

// buildLabels formats the top rows of f.Labels or f.Modules.
func buildLabels(rows []facts.LabelStat, steps int) []labelRow {
	var out []labelRow
	for k, l := range rows {
		if k == topLabels {
			break
		}
		name := l.Name
		if l.Path != "" {
			name = l.Path
		}
		r := labelRow{Name: clean(name), Depth: l.Depth, Calls: l.Calls, CPU: fmtDur(l.TotalUS), PerStep: nullMark,
			Share: fmtPct(l.Ratio), GPU: fmtDur(l.GPUUS), Kernels: l.Kernels, GPUSpan: nullMark}
		if steps > 0 {
			r.PerStep = fmtDur(l.PerStepUS)
		}
		if l.GPUSpanUS != nil {
			r.GPUSpan = fmtDur(*l.GPUSpanUS)
		}
		out = append(out, r)
	}
	return out
}

// memoryChart draws one device's allocated (and reserved) bytes over
// time as step lines, the steps shaded in turn and the peak marked. Nil
// without a curve.
func memoryChart(id string, v memoryView) *svgChart {
	if len(v.curve) == 0 {
		return nil
	}
	const (
		gutter  = 76.0
		plotTop = 22.0
		plotBot = 182.0
	)
	x0, x1 := math.Min(0, v.curve[0].OffsetUS), v.curve[len(v.curve)-1].OffsetUS
	var top float64
	for _, p := range v.curve {
		top = math.Max(top, math.Max(float64(p.AllocatedBytes), float64(p.ReservedBytes)))
		x1 = math.Max(x1, p.OffsetUS)
	}
	for _, st := range v.steps {
		x1 = math.Max(x1, st.OffsetUS+st.DurUS)
	}
	if !(x1 > x0) {
		x1 = x0 + 1
	}
	if !(top > 0) {
		top = 1
	}
	plotW, plotH := chartW-gutter, plotBot-plotTop
	px := func(us float64) float64 { return gutter + (us-x0)/(x1-x0)*plotW }
	py := func(b float64) float64 { return plotBot - b/top*plotH }
	c := &svgChart{ID: id, Title: "Memory over time: " + v.Device, Class: "chart-memory"}
	for k, st := range v.steps {
		cls := "m-step"
		if k%2 == 1 {
			cls = "m-step2"
		}
		c.Rects = append(c.Rects, svgRect{X: fixed(px(st.OffsetUS), 2), Y: num(plotTop), W: fixed(math.Max(st.DurUS/(x1-x0)*plotW, 0.5), 2), H: num(plotH), Class: cls,
			Tip: fmt.Sprintf("%s: %d allocations, peak %s, %s at its end", stepLabel(st.Step, k), st.Allocs, fmtBytes(float64(st.PeakAllocatedBytes)), fmtBytes(float64(st.EndAllocatedBytes)))})
	}
	for _, g := range []float64{0, 0.5, 1} {
		y := plotBot - g*plotH
		c.Lines = append(c.Lines, svgLine{X1: num(gutter), Y1: num(y), X2: num(chartW), Y2: num(y)})
		c.Texts = append(c.Texts, svgText{X: num(gutter - 6), Y: num(y + 4), Anchor: "end", Class: "axis", Text: fmtBytes(top * g)})
	}
	for _, g := range []float64{0, 0.5, 1} {
		anchor := "middle"
		switch g {
		case 0:
			anchor = ""
		case 1:
			anchor = "end"
		}
		us := x0 + g*(x1-x0)
		c.Texts = append(c.Texts, svgText{X: num(gutter + g*plotW), Y: num(plotBot + 16), Anchor: anchor, Class: "axis", Text: fmtAxisSigned(us)})
	}
	stepLine := func(val func(facts.MemoryPoint) int64) string {
		var b strings.Builder
		for k, p := range v.curve {
			x := fixed(px(p.OffsetUS), 1)
			if k > 0 {
				b.WriteString(" " + x + "," + fixed(py(float64(val(v.curve[k-1]))), 1))
			}
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(x + "," + fixed(py(float64(val(p))), 1))
		}
		if last := v.curve[len(v.curve)-1]; x1 > last.OffsetUS {
			b.WriteString(" " + fixed(px(x1), 1) + "," + fixed(py(float64(val(last))), 1))
		}
		return b.String()
	}
	if v.hasReserved {
		c.Polylines = append(c.Polylines, svgPolyline{Class: "m-res", Points: stepLine(func(p facts.MemoryPoint) int64 { return p.ReservedBytes })})
	}
	c.Polylines = append(c.Polylines, svgPolyline{Class: "m-alloc", Points: stepLine(func(p facts.MemoryPoint) int64 { return p.AllocatedBytes })})
	const side = 7.0
	px0, py0 := px(v.peakOffset), py(float64(v.peakBytes))
	c.Marks = append(c.Marks, svgRect{X: num(px0 - side/2), Y: num(py0 - side/2), W: num(side), H: num(side), Class: "m-peak", Tip: "peak " + v.Peak + " at " + v.PeakAt + " in " + v.PeakOp})
	anchor := ""
	if px0 > chartW-160 {
		anchor = "end"
	}
	c.Texts = append(c.Texts, svgText{X: num(px0 + 6), Y: num(math.Max(py0-6, 12)), Anchor: anchor, Class: "label", Text: "peak " + v.Peak})
	if anchor == "end" {
		c.Texts[len(c.Texts)-1].X = num(px0 - 6)
	}
	c.W, c.H = num(chartW), num(plotBot+22)
	c.Legend = append(c.Legend, legendItem{Class: "m-alloc", Label: "allocated", Value: "peak " + v.Peak})
	if v.hasReserved {
		c.Legend = append(c.Legend, legendItem{Class: "m-res", Label: "reserved", Value: "max " + v.MaxReserved})
	}
	if len(v.steps) > 0 {
		c.Legend = append(c.Legend, legendItem{Class: "m-step2", Label: "steps, shaded in turn", Value: strconv.Itoa(len(v.steps))})
	}
	c.Desc = v.Summary + "."
	if v.StartNote != "" {
		c.Note = "Note: " + v.StartNote + "."
	}
	return c
}

// fmtAxisSigned is fmtAxis for offsets that may be negative.
func fmtAxisSigned(us float64) string {
	if us < 0 {
		return "-" + fmtAxis(-us)
	}
	return fmtAxis(us)
}
