package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// ANSI styles used by Text when color is true.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// textMaxFindings caps the findings listed per trace in the terminal, and
// textMaxMessage the runes of each message shown.
const (
	textMaxFindings = 10
	textMaxMessage  = 200
)

// Text writes a compact, ranked summary for a terminal: per trace one header
// line (path, device, rank, steps, window in ms), the verdict, a warning
// when the trace was repaired, the GPU busy share and the largest idle causes
// and the top kernel (when the facts carry a timeline and a kernel table),
// up to 10 findings (rank, severity, impact as
// a percentage of step time, confidence, rule id, title and the message,
// on a terminal (t.Cut) cut at a word boundary to 200 characters), the
// number of rules not evaluated with their hints, and the diagnostics count.
// With t.Color, severities and warnings get ANSI colours; without, the output
// is plain ASCII apart from strings from the trace. Control characters in
// trace strings are removed so they cannot drive the terminal.
func Text(w io.Writer, r *engine.Result, t Terminal) error {
	if r == nil {
		return fmt.Errorf("render text: %w", errNilResult)
	}
	st := func(code, s string) string {
		if !t.Color {
			return s
		}
		return code + s + ansiReset
	}
	foc := focusRanks(r, rankTable(r))
	views := shownViews(buildViews(r), foc)
	var b strings.Builder
	if len(views) == 0 {
		b.WriteString("stepdoctor: no traces analysed\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", clean(n))
	}
	if v := buildBaseline(r); v != nil {
		fmt.Fprintf(&b, "%s\n", clean(v.Heading))
		for _, p := range v.Pairs {
			fmt.Fprintf(&b, "  %s: %s\n", clean(p.Title), clean(p.Verdict))
			for _, w := range p.Warnings {
				fmt.Fprintf(&b, "    warning: %s\n", clean(w))
			}
			for _, reg := range p.Regressions {
				fmt.Fprintf(&b, "    %s %s\n", st(ansiRed+ansiBold, "regression"), clean(reg))
			}
		}
		if v.HiddenLine != "" {
			fmt.Fprintf(&b, "  %s\n", clean(v.HiddenLine))
		}
		if v.Unpaired != "" {
			fmt.Fprintf(&b, "  %s %s\n", st(ansiBold, "not compared:"), clean(v.Unpaired))
		}
		b.WriteString("\n")
	}
	for _, sk := range r.Skipped {
		fmt.Fprintf(&b, "%s %s: %s\n", st(ansiBold, "skipped"), clean(sk.Path), clean(sk.Reason))
	}
	ruleErrorsText(&b, ruleErrorViews(r), st)
	if len(r.Notes)+len(r.Skipped)+len(r.RuleErrors) > 0 {
		b.WriteString("\n")
	}
	if ranks := foc.Rows; len(ranks) > 0 {
		fmt.Fprintf(&b, "%d ranks (identity from %s): rank, mean step, GPU busy, compute/step, comm/step, last at collectives\n", len(ranks)+foc.Hidden, ranks[0].Source)
		for _, rr := range ranks {
			mark := ""
			if rr.Straggler {
				mark = st(ansiBold, "  <- straggler")
			}
			if rr.Typical {
				mark += "  (median rank)"
			}
			fmt.Fprintf(&b, "  %4s  %s  %s  %s  %s  %s%s\n", rr.Rank, rr.StepMean, rr.Busy, rr.Compute, rr.Comm, rr.LastArrival, mark)
		}
		if foc.Straggler != "" {
			fmt.Fprintf(&b, "  %s\n", clean(foc.Straggler))
		}
		if line := foc.HiddenLine(); line != "" {
			fmt.Fprintf(&b, "  %s\n", clean(line))
		}
		b.WriteString("\n")
	}
	for i, v := range views {
		if i > 0 {
			b.WriteString("\n")
		}
		head := []string{v.DeviceLabel}
		if v.Rank != "" {
			head = append(head, v.Rank)
		}
		if v.HasSteps {
			head = append(head, stepCount(v.Steps))
		} else {
			head = append(head, "no steps")
		}
		head = append(head, v.Window)
		fmt.Fprintf(&b, "%s  (%s)\n", st(ansiBold, clean(v.Path)), strings.Join(head, ", "))
		fmt.Fprintf(&b, "  %s\n", clean(v.Verdict))
		if v.Repaired {
			fmt.Fprintf(&b, "  %s\n", st(ansiRed+ansiBold, "! this trace was repaired; figures may be partial"))
		}
		if sv := v.Series; len(sv.Timeline) > 0 && sv.WindowUS > 0 {
			parts := []string{}
			for k, ic := range sv.Idle {
				if k == 4 {
					break
				}
				parts = append(parts, ic.Label+" "+ic.Share)
			}
			line := "GPU busy " + sv.Busy
			if len(parts) > 0 {
				line += "; idle waiting on " + strings.Join(parts, ", ")
			}
			fmt.Fprintf(&b, "  %s\n", line)
		}
		for _, r := range v.Series.PhaseRows {
			fmt.Fprintf(&b, "  %s\n", textPhase(r))
		}
		if sv := v.Series; len(sv.KernelRows) > 0 && sv.KernelTotalUS > 0 {
			k := sv.KernelRows[0]
			fmt.Fprintf(&b, "  top kernel: %s (%s, %s of kernel time)\n", shorten(k.Name, 80), k.Total, k.Share)
		}
		for _, m := range v.Series.Memory {
			fmt.Fprintf(&b, "  memory: %s\n", m.Summary)
			if m.StartNote != "" {
				fmt.Fprintf(&b, "    (%s)\n", m.StartNote)
			}
		}
		textLabels(&b, "record_function labels", v.Series.Labels)
		textLabels(&b, "nn.Modules", v.Series.Modules)
		if len(v.Findings) == 0 && len(v.Minor) == 0 {
			b.WriteString("  no findings\n")
		}
		for k, f := range v.Findings {
			if k == textMaxFindings {
				fmt.Fprintf(&b, "  ... %d more findings (see the HTML or JSON report)\n", len(v.Findings)-k)
				break
			}
			sev := fmt.Sprintf("%-6s", severityLabel(f.Severity))
			switch f.Severity {
			case "high":
				sev = st(ansiRed+ansiBold, sev)
			case "medium":
				sev = st(ansiYellow, sev)
			case "low":
				sev = st(ansiCyan, sev)
			default:
				sev = st(ansiDim, sev)
			}
			fmt.Fprintf(&b, "  %2d. %s %6s  %-9s %s: %s\n", f.Rank, sev, f.Impact, clean(f.Confidence), clean(f.Rule), clean(f.Title))
			if f.Message != "" {
				msg := clean(f.Message)
				if t.Cut {
					msg = shortenWords(msg, textMaxMessage)
				}
				fmt.Fprintf(&b, "      %s\n", st(ansiDim, msg))
			}
		}
		if len(v.Minor) > 0 {
			parts := make([]string, len(v.Minor))
			for k, f := range v.Minor {
				parts[k] = clean(f.Rule) + " " + f.Impact
			}
			fmt.Fprintf(&b, "  minor (under 0.5%% each): %s\n", strings.Join(parts, ", "))
		}
		if n := len(v.NotEvaluated); n > 0 {
			fmt.Fprintf(&b, "  not evaluated: %d rule(s)\n", n)
			for k, ne := range v.NotEvaluated {
				if k == 5 {
					fmt.Fprintf(&b, "    ... %d more\n", n-k)
					break
				}
				hint := ne.Hint
				if hint == "" {
					hint = "missing " + strings.Join(ne.Missing, ", ")
				}
				fmt.Fprintf(&b, "    %s: %s\n", clean(ne.Rule), clean(hint))
			}
		}
		h := v.Health
		for _, d := range h.Diagnostics {
			if d.Reason == "rule_failed" {
				fmt.Fprintf(&b, "  %s %s\n", st(ansiRed+ansiBold, "! rule failed:"), clean(d.Message))
			}
		}
		if len(h.Diagnostics) > 0 || h.Dropped > 0 {
			fmt.Fprintf(&b, "  health: %d events read, %d kept, %d dropped, %d diagnostic(s)\n",
				h.EventsRead, h.EventsKept, h.Dropped, len(h.Diagnostics))
			textDiagnostics(&b, h.Diagnostics)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write text: %w", err)
	}
	return nil
}

// maxTextDiagnostics is how many reader diagnostics the text summary
// lists under a trace's health line; the Markdown, HTML and JSON reports
// list them all.
const maxTextDiagnostics = 5

// textDiagnostics lists a trace's reader diagnostics (repairs, dropped
// events, warnings) under its health line, the most maxTextDiagnostics,
// so no repair goes unsaid in the terminal either.
func textDiagnostics(b *strings.Builder, ds []trace.Diagnostic) {
	n := 0
	for i, d := range ds {
		if d.Reason == "rule_failed" {
			continue // listed above
		}
		if n == maxTextDiagnostics {
			fmt.Fprintf(b, "    ... and %d more (the Markdown, HTML and JSON reports list them all)\n", len(ds)-i)
			return
		}
		fmt.Fprintf(b, "    %s\n", clean(d.String()))
		n++
	}
}

// textLabels lists label or module rows: host time, GPU time, calls and
// name, one per line.
func textLabels(b *strings.Builder, title string, rows []labelRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s (host time, GPU time, calls):\n", title)
	for _, l := range rows {
		fmt.Fprintf(b, "    %10s  %10s  %6d  %s\n", l.CPU, l.GPU, l.Calls, shorten(l.Name, 100))
	}
}

// textPhase is one line of the role breakdown by inference phase: the
// span, its iterations, time and GPU busy share, and its largest roles.
func textPhase(r phaseRow) string {
	head := r.Label
	switch r.Spans {
	case nullMark:
	case "1":
		head += " (1 iteration)"
	default:
		head += " (" + r.Spans + " iterations)"
	}
	return fmt.Sprintf("%s: %s, %s of the window, GPU busy %s; %s", clean(head), r.Time, r.Window, r.Busy, clean(r.Top))
}

// ruleErrorsText lists the failed rules in the terminal summary; st styles
// (colour on a terminal, else the text as it is).
func ruleErrorsText(b *strings.Builder, errs []ruleErrorView, st func(code, s string) string) {
	if len(errs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s\n", st(ansiYellow, ruleErrorsHeading(len(errs))))
	for _, e := range errs {
		fmt.Fprintf(b, "  %s %s\n", st(ansiBold, "rule failed"), clean(e.Line))
	}
}
