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
// result. How a script rule meets the trace is the rule's own metadata
// (custom.trace, rules.TraceLink): the trace rules that measure the same
// cause, the hot host events it causes (with_stack), and the trace fact
// that confirms it, compared with a param of the confirming trace rule
// (so a configured threshold holds for the join too). The built-in pack:
//
//	script rule                                  backed when the trace shows          impact
//	dataloader-num-workers                       dataloader_single_process and        dataloader_time_ratio
//	                                             dataloader_time_ratio > dataloader-bound's min_ratio
//	host-sync-in-loop                            sync_per_step >= host-sync-in-step's sync_time_ratio (host time blocked
//	                                             min_per_step                         in syncs); the prior when null
//	blocking-copy, dataloader-pin-memory,        memcpy_pageable_htod_count >=        memcpy_time_ratio
//	cpu-tensor-then-copy                         pageable-memcpy's min_pageable
//
// A script finding whose cause a trace finding already reports merges
// into it (the trace finding points at the line). A backed finding becomes
// confirmed and takes the measured share of step time as its impact, so it
// ranks among the trace findings by measured time. Other script findings
// keep their prior impact and "likely". Every joined finding keeps its
// Location, and its message starts with file:line:col so that renderers
// without a location column still point at the line. Several findings
// backed by the same measurement each carry the full measured share (it is
// the time their common cause costs, not a sum).

// JoinScript adds sr's findings to every trace result in res, confirmed and
// re-weighted where the trace backs them (see the table above), and ranks
// each trace's findings again (rules.Rank). set is the rule set the script
// was linted with (its trace links and thresholds); nil means the built-in
// pack.
func JoinScript(res *Result, sr *ScriptResult, set *rules.Set) error {
	if res == nil || sr == nil {
		return nil
	}
	if set == nil {
		var err error
		if set, err = rules.Builtin(); err != nil {
			return fmt.Errorf("load built-in rules: %w", err)
		}
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
			link, _ := set.TraceLink(f.Rule)
			stack := ""
			if site, ok := stackSite(tr.Facts, sr.Facts, f, link.StackSite); ok {
				stack = fmt.Sprintf("; with_stack: the trace puts %d %s (%.2f ms) inside %s() at %s:%d", site.Count, siteNoun[site.Kind], site.TimeUS/1e3, site.Func, site.File, site.Line)
			}
			// The trace already reports this cause: point its finding at the
			// line instead of adding a second finding for the same time.
			if tf := traceFinding(tr, link.SameCause); tf != nil {
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
			if c, ok := set.Confirm(f.Rule, tr.Facts); ok {
				f.Confidence = rules.Confirmed
				if c.HasImpact {
					f.Impact = c.Impact
				}
				f.Message += "; confirmed: " + c.Why
				f.Evidence = append(f.Evidence, c.Evidence...)
			} else if measuredQuiet(tr, link.SameCause) {
				// The trace could measure this cause and found nothing worth
				// reporting: keep the line, claim no time.
				f.Impact = 0
				f.Message += "; the trace does not show this cost (" + strings.Join(link.SameCause, ", ") + " stayed quiet)"
			}
			if f.Evidence == nil {
				f.Evidence = []rules.Evidence{}
			}
			added = append(added, f)
		}
		tr.Findings = append(tr.Findings, added...)
		rules.Rank(tr.Findings)
	}
	if n := partlyChecked(sr); n != "" {
		res.Notes = append(res.Notes, n)
	}
	return nil
}

// partlyChecked is the note for a script whose syntax errors hid parts of
// it from the script rules (as lint says of it), naming the first; "" for
// a script read whole.
func partlyChecked(sr *ScriptResult) string {
	ds := sr.Diagnostics
	if len(ds) == 0 {
		return ""
	}
	more := ""
	if len(ds) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(ds)-1)
	}
	return fmt.Sprintf("script %s partly checked: at line %d, %s%s; findings in those regions may be missing (stepdoctor lint lists them)", sr.Path, ds[0].Line, ds[0].Message, more)
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

var siteNoun = map[string]string{"sync": "host syncs", "dataloader": "DataLoader fetches", "memcpy": "pageable copies"}

// stackSite finds, in a with_stack trace, the Python function that
// encloses the finding's line and the hot events of the finding's kind
// under it. Frames name a function by its first line, so the match is the
// innermost def around the line (module level: line 1, <module>) in a file
// whose path ends like the script's. kind is the script rule's
// TraceLink.StackSite.
func stackSite(tf *facts.Facts, sf *script.Facts, f rules.Finding, kind string) (facts.PySite, bool) {
	if kind == "" || tf == nil || sf == nil || f.Location == nil || len(tf.PythonSites) == 0 {
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
