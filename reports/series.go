package reports

import (
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
	BusyUS     float64     // busy time on the timeline
	IdleCauses []roleTotal // idle causes with time, largest first

	TopKernels     []facts.KernelStat
	KernelTotalUS  float64        // sum over TopKernels
	TopOps         []facts.OpStat // sorted by self CPU time, largest first
	OpSelfCPUTotal float64        // sum of SelfCPUUS over TopOps
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
	if len(s.Timeline) > 0 {
		s.WindowUS = nonNeg(f.WindowUS)
		for _, sp := range s.Timeline {
			s.WindowUS = max(s.WindowUS, nonNeg(sp.OffsetUS)+nonNeg(sp.DurUS))
		}
	}
	// Busy time and idle causes come from the facts, not from the
	// timeline, whose spans are downsampled for drawing.
	if f.GPUBusyRatio != nil && f.WindowUS > 0 {
		s.BusyUS = *f.GPUBusyRatio * f.WindowUS
		for _, c := range f.IdleCauseRatios() {
			if c.Ratio <= 0 {
				continue
			}
			s.IdleCauses = append(s.IdleCauses, roleTotal{Role: c.Cause, TotalUS: c.Ratio * f.WindowUS, Share: c.Ratio})
		}
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
	for _, k := range s.TopKernels {
		s.KernelTotalUS += nonNeg(k.TotalUS)
	}
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
	return s
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
		return "CUDA runtime"
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
	}
	return "r-x"
}

// shortName cuts a long event name (kernel signatures run to hundreds of
// characters) to n runes for chart labels and tables that have no room.
func shortName(s string, n int) string { return shorten(clean(s), n) }
