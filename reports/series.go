package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// seriesView is the render-ready form of the chart data in facts: the
// per-step role breakdown, the GPU timeline, and the kernel and operator
// tables. Each part is empty when the facts do not carry it, and renderers
// then omit its section. Times are microseconds.
type seriesView struct {
	Steps     []facts.StepBreakdown
	StepRoles []roleTotal // roles with time, in facts.Roles order
	StepSumUS float64     // sum of step durations

	Timeline   []facts.TimelineSpan
	WindowUS   float64     // timeline extent: max(window, last span end)
	BusyUS     float64     // busy time in W (gpu_busy_ratio x |W|)
	busyKnown  bool        // gpu_busy_ratio is there
	windowW    float64     // |W| (WindowUS is the timeline extent, which may reach past it)
	busyShare  float64     // gpu_busy_ratio: the busy share of W, never of the timeline extent
	IdleCauses []roleTotal // idle causes with time, largest first

	// Roofline: the modelled ops with FLOPs and the device's roof (peak
	// FLOP/s of the top op's dtype, memory bandwidth); Roof 0 without a
	// known device.
	RooflineOps       []facts.RooflineOp
	RoofFLOPS, RoofBW float64
	RoofName          string

	TopKernels     []facts.KernelStat
	KernelTotalUS  float64        // sum over TopKernels
	TopOps         []facts.OpStat // sorted by self CPU time, largest first
	OpSelfCPUTotal float64        // sum of SelfCPUUS over TopOps

	// The same data formatted once for every renderer.
	Busy       string       // GPU busy share of W ("7.4%"), the fact gpu_busy_ratio; nullMark without it
	Window     string       // |W| as a duration: what Busy and Idle are shares of
	Idle       []shareRow   // IdleCauses: label and share of W
	RoleRows   []shareRow   // StepRoles: label, time per step and share of the step sum
	StepRows   []stepRow    // Steps, in order
	MeanStep   string       // mean step duration of Steps
	KernelRows []kernelRow  // TopKernels
	OpRows     []opRow      // TopOps
	OpDevice   bool         // the operator table has device columns (the trace has GPU activity)
	CollRows   []collRow    // the collectives table (collective_stats)
	Memory     []memoryView // per device (profile_memory), GPUs first
	Labels     []labelRow   // top record_function labels
	Modules    []labelRow   // top nn.Modules, by path
	// The role breakdown of a trace without steps (the whole window, from
	// the step_*_ratio facts) and per inference phase (phase_breakdown):
	// PhaseRoles are the column roles, PhaseRows the rows.
	PhaseRoles []shareRow
	PhaseRows  []phaseRow
}

// phaseRow is one row of the role breakdown by span: the whole window or
// an inference phase, its iterations, time, share of the window, GPU busy
// share and each PhaseRoles role's share of its time.
type phaseRow struct {
	Label, Spans, Time, Window, Busy string
	Roles                            []string
	Top                              string // the three largest roles with their shares, largest first
}

// phaseRows builds the role breakdown by span: the whole window of a trace
// without steps (a trace with steps has the per-step table), then each
// phase of phase_breakdown. Columns are the roles some row has time in.
func phaseRows(f *facts.Facts) ([]shareRow, []phaseRow) {
	type row struct {
		label, spans   string
		timeUS, window float64
		busy           *float64
		roles          map[string]float64 // share of the row's time
	}
	var rows []row
	if !f.HasSteps && f.WindowUS > 0 {
		if rr := f.RoleRatios(); len(rr) > 0 {
			// GPU busy as the phases count it: the GPU roles' share.
			var busy float64
			r := row{label: "whole window", spans: nullMark, timeUS: f.WindowUS, window: 1, busy: &busy, roles: map[string]float64{}}
			for _, c := range rr {
				r.roles[c.Cause] = c.Ratio
				if facts.IsGPURole(c.Cause) {
					busy += c.Ratio
				}
			}
			rows = append(rows, r)
		}
	}
	for _, p := range f.PhaseBreakdowns {
		busy := p.GPUBusyRatio
		r := row{label: p.Phase, spans: fmt.Sprint(p.Spans), timeUS: p.TimeUS, window: p.WindowRatio, busy: &busy, roles: map[string]float64{}}
		for role, us := range p.RolesUS {
			if p.TimeUS > 0 {
				r.roles[role] = us / p.TimeUS
			}
		}
		rows = append(rows, r)
	}
	if len(f.PhaseBreakdowns) == 0 {
		return nil, nil // the whole window alone adds nothing to the facts table
	}
	var cols []shareRow
	for _, role := range facts.Roles {
		for _, r := range rows {
			if r.roles[role] > 0 {
				cols = append(cols, shareRow{Role: role, Label: roleLabel(role), Class: roleClass(role)})
				break
			}
		}
	}
	var out []phaseRow
	for _, r := range rows {
		pr := phaseRow{Label: r.label, Spans: r.spans, Time: fmtDur(r.timeUS), Window: fmtPct(r.window), Busy: nullMark}
		if r.busy != nil {
			pr.Busy = fmtPct(*r.busy)
		}
		for _, c := range cols {
			pr.Roles = append(pr.Roles, fmtPct(r.roles[c.Role]))
		}
		top := slices.Clone(cols)
		slices.SortStableFunc(top, func(a, b shareRow) int { return cmp.Compare(r.roles[b.Role], r.roles[a.Role]) })
		var parts []string
		for k, c := range top {
			if k == 3 || r.roles[c.Role] <= 0 {
				break
			}
			parts = append(parts, c.Label+" "+fmtPct(r.roles[c.Role]))
		}
		pr.Top = strings.Join(parts, ", ")
		out = append(out, pr)
	}
	return cols, out
}

// collRow is one row of the collectives table, formatted.
type collRow struct {
	Kind, Group, Count, Bytes, Time, Exposed, AlgBW, BusBW string
}

// collRows formats collective_stats: sizes from record_shapes, bandwidths
// in GB/s, nullMark where unknown.
func collRows(stats []facts.CollectiveStat) []collRow {
	var out []collRow
	gbps := func(p *float64) string {
		if p == nil {
			return nullMark
		}
		return fixed(*p, 2) + " GB/s"
	}
	for _, c := range stats {
		r := collRow{Kind: c.Kind, Group: c.Group, Count: fmt.Sprint(c.Count), Bytes: nullMark,
			Time: fmtDur(c.TimeUS), Exposed: fmtDur(c.ExposedUS), AlgBW: gbps(c.AlgBWGBps), BusBW: gbps(c.BusBWGBps)}
		r.Group = groupLabel(c)
		if c.RanksBusBWGBps != nil {
			r.BusBW += fmt.Sprintf(" (best of %d ranks %s)", c.RanksCount, gbps(c.RanksBusBWGBps))
		}
		if c.Bytes != nil {
			r.Bytes = fmtBytes(float64(*c.Bytes))
			if c.SizedCount < c.Count {
				r.Bytes += fmt.Sprintf(" (%d of %d sized)", c.SizedCount, c.Count)
			}
		}
		out = append(out, r)
	}
	return out
}

// groupLabel names a collective's process group: its c10d name, its
// description and its size ("3 (8 ranks)", "0 default_pg (2 ranks)");
// nullMark when the trace names no group.
func groupLabel(c facts.CollectiveStat) string {
	if c.Group == "" {
		return nullMark
	}
	l := c.Group
	if c.GroupDesc != "" {
		l += " " + c.GroupDesc
	}
	if c.GroupSize > 0 {
		l += fmt.Sprintf(" (%d ranks)", c.GroupSize)
	}
	return l
}

// shareRow is a role or idle cause formatted: its label, CSS class, time
// per step (roles only) and share.
type shareRow struct {
	Role    string
	Label   string
	Class   string
	PerStep string
	Share   string
}

// stepRow is one step of the per-step breakdown: label, duration and the
// time of each role in StepRoles.
type stepRow struct {
	Label string
	Dur   string
	Roles []string
}

// kernelRow is one kernel of the kernel table; Share is of the listed
// kernels' total time.
type kernelRow struct {
	Name             string
	Count            int64
	Total, Mean, Max string
	Share            string // nullMark when the total is 0
	TotalUS          float64
}

// opRow is one operator of the operator table.
type opRow struct {
	Name                                       string
	Calls                                      int64
	CallsPerStep                               string
	SelfCPU, TotalCPU, SelfDevice, TotalDevice string
	SelfCPUUS                                  float64
}

// roleTotal is one role's (or idle cause's) time: total, per step, and
// its share of the whole (0..1).
type roleTotal struct {
	Role    string
	TotalUS float64
	MeanUS  float64 // per step; 0 for idle causes
	Share   float64 // of the step sum (roles) or of the window (causes)
}

// buildSeries extracts the chart data from f; nil f gives an empty view.
func buildSeries(f *facts.Facts) seriesView {
	s := buildSeriesCore(f)
	for _, op := range f.RooflineOps {
		if op.FLOPs > 0 && op.Intensity > 0 && op.FLOPSPerS > 0 && finite(op.Intensity) && finite(op.FLOPSPerS) {
			s.RooflineOps = append(s.RooflineOps, op)
		}
	}
	if p := f.DevicePeak; p != nil && len(s.RooflineOps) > 0 && p.MemBandwidth > 0 {
		s.RoofFLOPS, s.RoofBW, s.RoofName = s.RooflineOps[0].PeakFLOPSPerS, p.MemBandwidth, p.Name
		if s.RoofFLOPS <= 0 {
			s.RoofFLOPS = p.BF16FLOPS
		}
	}
	return s
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func buildSeriesCore(f *facts.Facts) seriesView {
	var s seriesView
	if f == nil {
		return s
	}
	s.Steps = f.Steps
	if len(s.Steps) > 0 {
		totals := map[string]float64{}
		for _, st := range s.Steps {
			s.StepSumUS += nonNeg(st.DurUS)
			for role, us := range st.RolesUS {
				totals[role] += nonNeg(us)
			}
		}
		for _, role := range knownFirst(facts.Roles, totals) {
			if totals[role] <= 0 {
				continue
			}
			rt := roleTotal{Role: role, TotalUS: totals[role], MeanUS: totals[role] / float64(len(s.Steps))}
			if s.StepSumUS > 0 {
				rt.Share = totals[role] / s.StepSumUS
			}
			s.StepRoles = append(s.StepRoles, rt)
		}
	}
	s.Timeline = f.Timeline
	s.windowW = f.WindowUS
	if len(s.Timeline) > 0 {
		s.WindowUS = nonNeg(f.WindowUS)
		for _, sp := range s.Timeline {
			s.WindowUS = max(s.WindowUS, nonNeg(sp.OffsetUS)+nonNeg(sp.DurUS))
		}
	}
	// Busy time and idle causes come from the facts, not from the
	// timeline, whose spans are downsampled for drawing.
	if f.GPUBusyRatio != nil {
		s.busyKnown, s.busyShare = true, *f.GPUBusyRatio
	}
	if f.GPUBusyRatio != nil && f.WindowUS > 0 {
		s.BusyUS = *f.GPUBusyRatio * f.WindowUS
		for _, c := range f.IdleCauseRatios() {
			if c.Ratio <= 0 {
				continue
			}
			s.IdleCauses = append(s.IdleCauses, roleTotal{Role: c.Cause, TotalUS: c.Ratio * f.WindowUS, Share: c.Ratio})
		}
		s.IdleCauses = splitLatency(s.IdleCauses, f)
		// Largest first; ties keep the IdleCauses order.
		slices.SortStableFunc(s.IdleCauses, func(a, b roleTotal) int {
			switch {
			case a.TotalUS > b.TotalUS:
				return -1
			case a.TotalUS < b.TotalUS:
				return 1
			}
			return 0
		})
	}
	s.TopKernels = f.TopKernels
	s.CollRows = collRows(f.CollectiveStats)
	s.Memory = buildMemory(f)
	s.Labels = buildLabels(f.Labels, f.StepsCount)
	s.Modules = buildLabels(f.Modules, f.StepsCount)
	s.PhaseRoles, s.PhaseRows = phaseRows(f)
	for _, k := range s.TopKernels {
		s.KernelTotalUS += nonNeg(k.TotalUS)
	}
	s.OpDevice = f.HasGPU
	if len(f.TopOps) > 0 {
		s.TopOps = slices.Clone(f.TopOps)
		slices.SortStableFunc(s.TopOps, func(a, b facts.OpStat) int {
			switch {
			case a.SelfCPUUS > b.SelfCPUUS:
				return -1
			case a.SelfCPUUS < b.SelfCPUUS:
				return 1
			}
			return strings.Compare(a.Name, b.Name)
		})
		for _, o := range s.TopOps {
			s.OpSelfCPUTotal += nonNeg(o.SelfCPUUS)
		}
	}
	formatSeries(&s)
	return s
}

// formatSeries fills the formatted rows of s from its data.
func formatSeries(s *seriesView) {
	s.Busy = nullMark
	if s.busyKnown {
		s.Busy = fmtPct(s.busyShare)
	}
	s.Window = fmtMS(s.windowW)
	for _, ic := range s.IdleCauses {
		s.Idle = append(s.Idle, shareRow{Role: ic.Role, Label: roleLabel(ic.Role), Class: roleClass(ic.Role), Share: fmtPct(ic.Share)})
	}
	for _, rt := range s.StepRoles {
		s.RoleRows = append(s.RoleRows, shareRow{Role: rt.Role, Label: roleLabel(rt.Role), Class: roleClass(rt.Role), PerStep: fmtDur(rt.MeanUS), Share: fmtPct(rt.Share)})
	}
	for i, st := range s.Steps {
		row := stepRow{Label: stepLabel(st.Name, i), Dur: fmtDur(st.DurUS)}
		for _, rt := range s.StepRoles {
			row.Roles = append(row.Roles, fmtDur(nonNeg(st.RolesUS[rt.Role])))
		}
		s.StepRows = append(s.StepRows, row)
	}
	if len(s.Steps) > 0 {
		s.MeanStep = fmtDur(s.StepSumUS / float64(len(s.Steps)))
	}
	for _, k := range s.TopKernels {
		share := nullMark
		if s.KernelTotalUS > 0 {
			share = fmtPct(nonNeg(k.TotalUS) / s.KernelTotalUS)
		}
		s.KernelRows = append(s.KernelRows, kernelRow{Name: clean(k.Name), Count: k.Count, Total: fmtDur(k.TotalUS), Mean: fmtDur(k.MeanUS), Max: fmtDur(k.MaxUS), Share: share, TotalUS: k.TotalUS})
	}
	for _, o := range s.TopOps {
		perStep := nullMark // no steps: calls per step is not measured
		if len(s.Steps) > 0 {
			perStep = fixed(o.CallsPerStep, 2)
		}
		s.OpRows = append(s.OpRows, opRow{Name: clean(o.Name), Calls: o.Calls, CallsPerStep: perStep,
			SelfCPU: fmtDur(o.SelfCPUUS), TotalCPU: fmtDur(o.TotalCPUUS), SelfDevice: fmtDur(o.SelfDeviceUS), TotalDevice: fmtDur(o.TotalDeviceUS), SelfCPUUS: o.SelfCPUUS})
	}
}

// splitLatency shows the launch latency inside the queued idle on its own
// (gpu_idle_queued_latency_ratio: queued work that started within 50 us of
// its launch returning): on ROCm the device takes ~15 us to start each
// kernel, which is no dependency the user can remove from the step, while
// the rest of queued is one (a stream or event wait, a collective's peers).
func splitLatency(causes []roleTotal, f *facts.Facts) []roleTotal {
	if f.GPUIdleQueuedLatencyRatio == nil || *f.GPUIdleQueuedLatencyRatio <= 0 {
		return causes
	}
	out := causes[:0:0]
	for _, c := range causes {
		if c.Role != "queued" {
			out = append(out, c)
			continue
		}
		lat := min(*f.GPUIdleQueuedLatencyRatio, c.Share)
		out = append(out, roleTotal{Role: "latency", TotalUS: lat * f.WindowUS, Share: lat})
		if rest := c.Share - lat; rest >= 0.0005 { // not a 0.0% row
			out = append(out, roleTotal{Role: "queued", TotalUS: rest * f.WindowUS, Share: rest})
		}
	}
	return out
}

// knownFirst lists the keys of m: those in order first, then any others
// sorted, so an unknown role or cause is still shown, deterministically.
func knownFirst(order []string, m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	var extra []string
	for k := range m {
		if !slices.Contains(order, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// nonNeg maps negative and non-finite values to 0.
func nonNeg(x float64) float64 {
	if isBad(x) || x < 0 {
		return 0
	}
	return x
}

// roleLabel is the human name of a breakdown role or idle cause.
func roleLabel(role string) string {
	switch role {
	case "kernel":
		return "kernels"
	case "memcpy":
		return "memcpy"
	case "memset":
		return "memset"
	case "communication":
		return "communication"
	case "runtime":
		return "GPU runtime" // CUDA or HIP runtime calls
	case "dataloader":
		return "DataLoader"
	case "cpu_op":
		return "CPU ops"
	case "other":
		return "other"
	case "busy":
		return "busy"
	case "sync":
		return "host sync"
	case "optimizer":
		return "optimizer step"
	case "launch":
		return "the launch call"
	case "queued":
		return "work already queued (GPU-side wait)"
	case "latency":
		return "launch latency (queued work starting)"
	case "warmup":
		return "one-off warm-up calls"
	case "python":
		return "Python"
	case "untraced":
		return "untraced host"
	}
	return clean(role)
}

// roleClass is the CSS class of a role or cause; unknown ones share "r-x".
func roleClass(role string) string {
	switch role {
	case "kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_op", "other",
		"busy", "sync", "optimizer", "launch", "untraced", "queued", "warmup", "python":
		return "r-" + strings.ReplaceAll(role, "_", "")
	case "latency":
		return "r-queued" // a part of queued
	}
	return "r-x"
}

// shortName cuts a long event name (kernel signatures run to hundreds of
// characters) to n runes for chart labels and tables that have no room.
func shortName(s string, n int) string { return shorten(clean(s), n) }
