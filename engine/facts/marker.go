package facts

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// StepMarker says what marked the steps: ProfilerStep#N, the spans named by
// --step-marker REGEX, or an inference engine's iteration spans found by
// --step-marker auto (AutoMarkers).
type StepMarker struct {
	// Source is "profiler_step", "regex" or "auto".
	Source string `json:"source" expr:"source"`
	// Pattern is the regular expression the step spans' names match.
	Pattern string `json:"pattern" expr:"pattern"`
	// Engine names the engine of an automatic marker (vllm, sglang, hf);
	// "" otherwise.
	Engine string `json:"engine" expr:"engine"`
	// Label describes the marker for people ("vLLM execute_model").
	Label string `json:"label" expr:"label"`
	// Steps counts the outermost marker spans; PrefillSteps and
	// DecodeSteps those whose name says the phase (vLLM and SGLang spans).
	Steps        int `json:"steps" expr:"steps"`
	PrefillSteps int `json:"prefill_steps" expr:"prefill_steps"`
	DecodeSteps  int `json:"decode_steps" expr:"decode_steps"`
}

// StepMarkerAuto is the --step-marker value that picks the first of
// AutoMarkers the trace shows.
const StepMarkerAuto = "auto"

// AutoMarker is one automatic step marker: the spans that an inference
// engine or library records around one iteration.
type AutoMarker struct {
	Engine  string
	Label   string
	Pattern *regexp.Regexp
	// phase names the phase of a span from its name's submatches: "prefill",
	// "decode", "mixed" or "".
	phase func(m []string) string
}

// AutoMarkers are the automatic step markers in the order --step-marker
// auto tries them; the first with a span in the trace wins.
var AutoMarkers = []AutoMarker{
	{"sglang", "SGLang batch spans (step[DECODE bs=N], step[PREFILL ...])", regexp.MustCompile(`^step\[([A-Za-z_]+)\b[^\]]*\]$`), sglangPhase},
	{"vllm", "vLLM execute annotations (execute_context_N(...)_generation_M(...))", regexp.MustCompile(`^execute_(?:\d+_)?context_(\d+)\(.*\)_generation_(\d+)\(.*\)$`), vllmPhase},
	{"vllm", "vLLM model runner execute_model (with_stack)", regexp.MustCompile(`(?:^|/)(?:gpu_)?model_runner\.py\(\d+\): execute_model$`), nil},
	{"sglang", "SGLang scheduler run_batch (with_stack)", regexp.MustCompile(`(?:^|/)scheduler\.py\(\d+\): (?:run_batch|_run_batch_inner)$`), nil},
	{"hf", "Hugging Face generate (with_stack)", regexp.MustCompile(`(?:^|/)generation/utils\.py\(\d+\): generate$`), nil},
}

func sglangPhase(m []string) string {
	switch m[1] {
	case "DECODE", "decode":
		return "decode"
	case "PREFILL", "EXTEND", "prefill", "extend":
		return "prefill"
	case "MIXED", "mixed":
		return "mixed"
	}
	return ""
}

func vllmPhase(m []string) string {
	ctx, _ := strconv.Atoi(m[1])
	gen, _ := strconv.Atoi(m[2])
	switch {
	case ctx > 0 && gen > 0:
		return "mixed"
	case ctx > 0:
		return "prefill"
	case gen > 0:
		return "decode"
	}
	return ""
}

// CheckStepMarker reports whether s is a valid --step-marker value: "",
// "auto" or a regular expression (Go RE2 syntax).
func CheckStepMarker(s string) error {
	if s == "" || s == StepMarkerAuto {
		return nil
	}
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("step marker %q: %w", s, err)
	}
	return nil
}

// markerSpans returns the outermost host spans (any CPU category) whose
// name matches re, in (start, file order), and each one's submatches.
// A span inside another matching span is part of that iteration.
func (d *deriver) markerSpans(re *regexp.Regexp) ([]int, [][]string) {
	evs := d.t.Events
	match := map[trace.Str][]string{}
	miss := map[trace.Str]bool{}
	var idx []int
	for i := range evs {
		e := &evs[i]
		if !isCPU(e) {
			continue
		}
		if miss[e.Name] {
			continue
		}
		if _, ok := match[e.Name]; !ok {
			m := re.FindStringSubmatch(d.t.Name(e))
			if m == nil {
				miss[e.Name] = true
				continue
			}
			match[e.Name] = m
		}
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(evs[a].TS, evs[b].TS), cmp.Compare(evs[b].Dur, evs[a].Dur), cmp.Compare(evs[a].Index, evs[b].Index))
	})
	out := idx[:0]
	var end int64
	for k, i := range idx {
		e := &evs[i]
		if k > 0 && e.End() <= end {
			continue // nested in the previous iteration
		}
		out = append(out, i)
		end = max(end, e.End())
	}
	subs := make([][]string, len(out))
	for k, i := range out {
		subs[k] = match[evs[i].Name]
	}
	return out, subs
}

// findMarker returns the steps of the first automatic marker the trace
// shows, with its description; nil when none matches.
func (d *deriver) findMarker() ([]int, *StepMarker, []string) {
	for _, am := range AutoMarkers {
		idx, subs := d.markerSpans(am.Pattern)
		if len(idx) == 0 {
			continue
		}
		m := &StepMarker{Source: "auto", Pattern: am.Pattern.String(), Engine: am.Engine, Label: am.Label, Steps: len(idx)}
		phases := make([]string, len(idx))
		if am.phase != nil {
			for k, s := range subs {
				phases[k] = am.phase(s)
			}
		}
		m.count(phases)
		return idx, m, phases
	}
	return nil, nil, nil
}

func (m *StepMarker) count(phases []string) {
	for _, p := range phases {
		switch p {
		case "prefill":
			m.PrefillSteps++
		case "decode":
			m.DecodeSteps++
		}
	}
}

// markerSteps picks the step spans of a trace without ProfilerStep#N from
// cfg.StepMarker: "auto" uses the first automatic marker found, a regular
// expression the spans it names. Without a marker the automatic one found
// is reported as StepMarkerFound, what --step-marker auto would use.
func (d *deriver) markerSteps() ([]int, []string) {
	switch s := d.cfg.StepMarker; s {
	case "":
		idx, m, phases := d.findMarker()
		d.f.StepMarkerFound = m
		d.markerIdx, d.markerPhase = idx, phases
		return nil, nil
	case StepMarkerAuto:
		idx, m, phases := d.findMarker()
		d.f.StepMarker = m
		return idx, phases
	default:
		re, err := regexp.Compile(s)
		if err != nil {
			d.f.Diagnostics = append(d.f.Diagnostics, trace.Diagnostic{Kind: trace.DiagWarning, Reason: "step_marker_invalid", Message: fmt.Sprintf("step marker %q is not a valid regular expression: %v", s, err), Offset: -1, Count: 1})
			return nil, nil
		}
		idx, _ := d.markerSpans(re)
		if len(idx) == 0 {
			d.f.Diagnostics = append(d.f.Diagnostics, trace.Diagnostic{Kind: trace.DiagWarning, Reason: "step_marker_unmatched", Message: fmt.Sprintf("no host span matches the step marker %q: the whole trace is one window", s), Offset: -1, Count: 1})
			idx, m, phases := d.findMarker()
			d.f.StepMarkerFound = m
			d.markerIdx, d.markerPhase = idx, phases
			return nil, nil
		}
		d.f.StepMarker = &StepMarker{Source: "regex", Pattern: s, Label: "spans matching " + s, Steps: len(idx)}
		return idx, make([]string, len(idx))
	}
}
