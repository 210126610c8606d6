package engine

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/rules"
)

// Script + trace join
//
// JoinScript adds a script's findings (from LintFile) to every trace
// result. A script finding whose cause the trace measured becomes
// confirmed and takes the measured share of step time as its impact, so it
// ranks among the trace findings by measured time:
//
//	script rule                                  backed when the trace shows          impact
//	dataloader-num-workers                       dataloader_single_process and        dataloader_time_ratio
//	                                             dataloader_time_ratio > 0.05
//	host-sync-in-loop                            sync_per_step >= 1                   sync_time_ratio (host time blocked
//	                                                                                  in syncs); the prior when null
//	blocking-copy, dataloader-pin-memory,        memcpy_pageable_htod_count >= 1      memcpy_time_ratio
//	cpu-tensor-then-copy
//
// Other script findings keep their prior impact and "likely". Every joined
// finding keeps its Location, and its message starts with file:line:col so
// that renderers without a location column still point at the line.
// Several findings backed by the same measurement each carry the full
// measured share (it is the time their common cause costs, not a sum).

// JoinMinDataloaderRatio is the DataLoader share of step time above which
// the trace backs dataloader-num-workers (the dataloader-bound rule's
// default threshold, torch-tb-profiler's 5%).
const JoinMinDataloaderRatio = 0.05

// JoinMinSyncPerStep is the host syncs per step from which the trace backs
// host-sync-in-loop (host-sync-in-step's default).
const JoinMinSyncPerStep = 1.0

// backing returns the measured impact and the evidence sentence when the
// trace facts back script rule id.
func backing(id string, f *facts.Facts) (float64, string, []rules.Evidence, bool) {
	if f == nil {
		return 0, "", nil, false
	}
	switch id {
	case "dataloader-num-workers":
		if f.DataloaderSingleProcess != nil && *f.DataloaderSingleProcess && f.DataloaderTimeRatio != nil && *f.DataloaderTimeRatio > JoinMinDataloaderRatio {
			r := *f.DataloaderTimeRatio
			return r, fmt.Sprintf("the trace shows a single-process DataLoader taking %.1f%% of step time", 100*r),
				[]rules.Evidence{{Name: "dataloader_time_ratio", Value: r, Unit: "ratio"}}, true
		}
	case "host-sync-in-loop":
		if f.SyncPerStep != nil && *f.SyncPerStep >= JoinMinSyncPerStep {
			ev := []rules.Evidence{{Name: "sync_per_step", Value: *f.SyncPerStep, Unit: "per_step"}}
			if f.SyncTimeRatio == nil {
				return -1, fmt.Sprintf("the trace shows %.1f host syncs per step", *f.SyncPerStep), ev, true
			}
			r := *f.SyncTimeRatio
			ev = append(ev, rules.Evidence{Name: "sync_time_ratio", Value: r, Unit: "ratio"})
			return r, fmt.Sprintf("the trace shows %.1f host syncs per step blocking the host %.1f%% of step time", *f.SyncPerStep, 100*r), ev, true
		}
	case "blocking-copy", "dataloader-pin-memory", "cpu-tensor-then-copy":
		if f.MemcpyPageableHtoDCount != nil && *f.MemcpyPageableHtoDCount >= 1 {
			ev := []rules.Evidence{{Name: "memcpy_pageable_htod_count", Value: float64(*f.MemcpyPageableHtoDCount), Unit: "count"}}
			if f.MemcpyTimeRatio == nil {
				return -1, fmt.Sprintf("the trace shows %d pageable host-to-device copies", *f.MemcpyPageableHtoDCount), ev, true
			}
			r := *f.MemcpyTimeRatio
			ev = append(ev, rules.Evidence{Name: "memcpy_time_ratio", Value: r, Unit: "ratio"})
			return r, fmt.Sprintf("the trace shows %d pageable host-to-device copies; copies take %.1f%% of step time", *f.MemcpyPageableHtoDCount, 100*r), ev, true
		}
	}
	return 0, "", nil, false
}

// JoinScript adds sr's findings to every trace result in res, confirmed and
// re-weighted where the trace backs them (see the table above), and ranks
// each trace's findings again (rules.Rank).
func JoinScript(res *Result, sr *ScriptResult) {
	if res == nil || sr == nil {
		return
	}
	for _, tr := range res.Traces {
		if tr == nil {
			continue
		}
		var added []rules.Finding
		for _, sf := range sr.Findings {
			f := sf
			f.Evidence = append([]rules.Evidence(nil), sf.Evidence...)
			f.References = append([]string(nil), sf.References...)
			var where string
			if sf.Location != nil {
				loc := *sf.Location
				f.Location = &loc
				where = fmt.Sprintf("%s:%d:%d", loc.File, loc.Line, loc.Column)
				f.Message = where + ": " + f.Message
			}
			stack := ""
			if site, ok := stackSite(tr.Facts, sr.Facts, f); ok {
				stack = fmt.Sprintf("; with_stack: the trace puts %d %s (%.2f ms) inside %s() at %s:%d", site.Count, siteNoun[site.Kind], site.TimeUS/1e3, site.Func, site.File, site.Line)
			}
			// The trace already reports this cause: point its finding at the
			// line instead of adding a second finding for the same time.
			if tf := traceFinding(tr, sameCause[f.Rule]); tf != nil {
				if where != "" {
					tf.Message += fmt.Sprintf("; in the script: %s (%s)", where, f.Rule) + stack
					if tf.Location == nil {
						tf.Location = f.Location
					}
				}
				continue
			}
			if stack != "" {
				f.Confidence = rules.Confirmed
				f.Message += stack
			}
			if impact, why, ev, ok := backing(f.Rule, tr.Facts); ok {
				f.Confidence = rules.Confirmed
				if impact >= 0 {
					f.Impact = impact
				}
				f.Message += "; confirmed: " + why
				f.Evidence = append(f.Evidence, ev...)
			} else if measuredQuiet(tr, sameCause[f.Rule]) {
				// The trace could measure this cause and found nothing worth
				// reporting: keep the line, claim no time.
				f.Impact = 0
				f.Message += "; the trace does not show this cost (" + strings.Join(sameCause[f.Rule], ", ") + " stayed quiet)"
			}
			if f.Evidence == nil {
				f.Evidence = []rules.Evidence{}
			}
			added = append(added, f)
		}
		tr.Findings = append(tr.Findings, added...)
		rules.Rank(tr.Findings)
	}
}

// sameCause maps a script rule to the trace rules that measure the same
// cause; a joined script finding merges into such a trace finding.
var sameCause = map[string][]string{
	"dataloader-num-workers":        {"dataloader-bound", "idle-gap-dataloader"},
	"dataloader-persistent-workers": {"dataloader-bound", "idle-gap-dataloader"},
	"dataloader-pin-memory":         {"pageable-memcpy"},
	"blocking-copy":                 {"pageable-memcpy"},
	"cpu-tensor-then-copy":          {"pageable-memcpy", "frequent-memcpy"},
	"host-sync-in-loop":             {"host-sync-in-step", "idle-gap-sync"},
	"zero-grad-set-to-none":         {"optimizer-zero-grad"},
	"optimizer-not-fused":           {"optimizer-foreach"},
	"no-autocast":                   {"amp-not-used"},
	"cat-in-loop":                   {"repeated-small-op"},
}

// traceFinding returns the first trace finding of tr among ids.
func traceFinding(tr *TraceResult, ids []string) *rules.Finding {
	for i := range tr.Findings {
		f := &tr.Findings[i]
		if f.Location == nil || f.Category != rules.CategoryScript {
			for _, id := range ids {
				if f.Rule == id {
					return f
				}
			}
		}
	}
	return nil
}

// measuredQuiet reports whether every trace rule among ids was evaluated
// on tr and none fired.
func measuredQuiet(tr *TraceResult, ids []string) bool {
	if len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		for _, ne := range tr.NotEvaluated {
			if ne.Rule == id {
				return false
			}
		}
	}
	return traceFinding(tr, ids) == nil
}

// siteKinds maps script rules to the kind of hot host event (PySite.Kind)
// they cause.
var siteKinds = map[string]string{
	"host-sync-in-loop":             "sync",
	"dataloader-num-workers":        "dataloader",
	"dataloader-persistent-workers": "dataloader",
	"dataloader-pin-memory":         "memcpy",
	"blocking-copy":                 "memcpy",
	"cpu-tensor-then-copy":          "memcpy",
}

var siteNoun = map[string]string{"sync": "host syncs", "dataloader": "DataLoader fetches", "memcpy": "pageable copies"}

// stackSite finds, in a with_stack trace, the Python function that
// encloses the finding's line and the hot events of the finding's kind
// under it. Frames name a function by its first line, so the match is the
// innermost def around the line (module level: line 1, <module>) in a file
// whose path ends like the script's.
func stackSite(tf *facts.Facts, sf *script.Facts, f rules.Finding) (facts.PySite, bool) {
	kind, ok := siteKinds[f.Rule]
	if !ok || tf == nil || sf == nil || f.Location == nil || len(tf.PythonSites) == 0 {
		return facts.PySite{}, false
	}
	line, name := 1, "<module>"
	if fn, ok := sf.EnclosingFunction(f.Location.Line); ok {
		line, name = fn.Line, fn.Name
	}
	script := filepath.ToSlash(filepath.Clean(f.Location.File))
	for _, s := range tf.PythonSites {
		if s.Kind != kind || s.Line != line || s.Func != name || path.Base(s.File) != path.Base(script) {
			continue
		}
		if strings.HasSuffix(script, s.File) || strings.HasSuffix(s.File, strings.TrimPrefix(script, "./")) {
			return s, true
		}
	}
	return facts.PySite{}, false
}
