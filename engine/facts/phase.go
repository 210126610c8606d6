package facts

import "slices"

// Phases of inference
//
// Serving engines label each iteration with what it computes: prefill
// (the prompt's tokens, compute-bound), decode (one new token per request,
// memory- and launch-bound) or mixed (chunked prefill batched with
// decodes). The automatic step markers (AutoMarkers) read it from the
// iteration spans' names: vLLM's execute_context_N(...)_generation_M(...)
// (N prefill requests, M decode requests) and SGLang's step[DECODE bs=N] /
// step[PREFILL ...] / step[EXTEND ...]. The phase breakdown is the role
// breakdown of the step breakdown restricted to each phase's iterations,
// whether or not those iterations are the steps (--step-marker auto).

// gpuRoles is how many of Roles, first in the order, are primary-device
// activity (kernel, memcpy, memset, communication): the GPU busy part of a
// breakdown.
const gpuRoles = 4

// IsGPURole reports whether a breakdown role is primary-device activity.
func IsGPURole(role string) bool {
	for _, r := range Roles[:gpuRoles] {
		if r == role {
			return true
		}
	}
	return false
}

// Phases are the phase names of PhaseBreakdown, in report order.
var Phases = []string{"prefill", "decode", "mixed"}

// PhaseBreakdown is the role breakdown of one inference phase: its
// iterations' spans, each extended to the end of the GPU work it launched
// and never past the next iteration's start, clipped to W.
type PhaseBreakdown struct {
	Phase string `json:"phase" expr:"phase"` // prefill, decode or mixed
	Spans int    `json:"spans" expr:"spans"` // iterations of this phase
	// TimeUS is |union of the spans ∩ W| (microseconds) and WindowRatio
	// that over |W| (0..1).
	TimeUS      float64 `json:"time_us" expr:"time_us"`
	WindowRatio float64 `json:"window_ratio" expr:"window_ratio"`
	// RolesUS splits TimeUS by the breakdown roles (Roles, priority
	// order, each role only time no earlier role claimed); they sum to
	// TimeUS.
	RolesUS map[string]float64 `json:"roles_us" expr:"roles_us"`
	// GPUBusyRatio is the part of TimeUS the primary device ran kernels,
	// copies, memsets or collectives (the GPU roles) / TimeUS.
	GPUBusyRatio float64 `json:"gpu_busy_ratio" expr:"gpu_busy_ratio"`
}

// phaseBreakdown fills PhaseBreakdowns from the iterations whose marker
// names a phase: the steps when the automatic marker made them, else the
// automatic marker's spans found in a trace without steps.
func (d *deriver) phaseBreakdown(win ivset, roleSets []ivset) {
	var spans []interval
	var phases []string
	switch {
	case d.stepPhase != nil:
		spans, phases = d.stepSpan, d.stepPhase
	case len(d.markerIdx) > 0:
		evs := d.t.Events
		starts := make([]int64, len(d.markerIdx))
		ends := make([]int64, len(d.markerIdx))
		for k, i := range d.markerIdx {
			starts[k], ends[k] = evs[i].TS, evs[i].End()
		}
		spans, phases = d.extendSpans(starts, ends), d.markerPhase
	}
	if len(spans) == 0 || d.windowNS <= 0 {
		return
	}
	other := len(Roles) - 1
	for _, ph := range Phases {
		var iv []interval
		for k, p := range phases {
			if p == ph && k < len(spans) {
				iv = append(iv, spans[k])
			}
		}
		if len(iv) == 0 {
			continue
		}
		set := intersect(unionOf(slices.Clone(iv)), win)
		totals := make([]int64, len(Roles))
		partition(set, roleSets, func(owner int, s, e int64) {
			if owner < 0 {
				owner = other
			}
			totals[owner] += e - s
		})
		b := PhaseBreakdown{Phase: ph, Spans: len(iv), TimeUS: float64(set.total()) / 1e3, RolesUS: make(map[string]float64, len(Roles))}
		b.WindowRatio = float64(set.total()) / float64(d.windowNS)
		var busy int64
		for r, n := range totals {
			b.RolesUS[Roles[r]] = float64(n) / 1e3
			if r < gpuRoles {
				busy += n
			}
		}
		if t := set.total(); t > 0 {
			b.GPUBusyRatio = float64(busy) / float64(t)
		}
		d.f.PhaseBreakdowns = append(d.f.PhaseBreakdowns, b)
	}
}
