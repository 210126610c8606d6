package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
)

// MarkdownLimit is the most bytes Markdown writes, leaving headroom under
// GitHub's 65,536-character limit for a pull-request comment.
const MarkdownLimit = 60000

// mdLimits bounds how much of each table Markdown writes. Levels are tried in
// order until the report fits MarkdownLimit.
type mdLimits struct {
	examples    int  // example events per finding
	diagnostics int  // diagnostics per trace
	notEval     int  // not-evaluated rules per trace
	findings    int  // findings per trace (detailed)
	docs        bool // include rule docs
	facts       bool // include the facts table
	evidence    bool // include evidence/examples blocks
	tableRows   int  // rows of the per-step, kernel and operator tables (0: tables left out)
}

var mdLevels = []mdLimits{
	{examples: 5, diagnostics: 20, notEval: 50, findings: 50, docs: true, facts: true, evidence: true, tableRows: 25},
	{examples: 3, diagnostics: 10, notEval: 20, findings: 30, docs: true, facts: true, evidence: true, tableRows: 10},
	{examples: 3, diagnostics: 5, notEval: 10, findings: 20, docs: false, facts: true, evidence: true, tableRows: 10},
	{examples: 1, diagnostics: 3, notEval: 5, findings: 10, docs: false, facts: false, evidence: true, tableRows: 5},
	{examples: 0, diagnostics: 3, notEval: 3, findings: 5, docs: false, facts: false, evidence: false, tableRows: 0},
	{examples: 0, diagnostics: 1, notEval: 0, findings: 3, docs: false, facts: false, evidence: false, tableRows: 0},
}

// Markdown writes r as GitHub-flavoured Markdown that fits a pull-request
// comment (at most MarkdownLimit bytes). Per trace: a header table (input
// path, device, rank, steps, window in ms), a one-line verdict, a repaired
// banner when the reader repaired the input, ranked findings (severity,
// impact as a percentage of step time, confidence, message, and in
// <details> blocks the evidence, example events and the rule doc with
// references), all facts ("—" for facts that could not be measured), rules
// not evaluated with their hints, and trace health with every diagnostic.
// Long tables are trimmed with a note saying how many rows were left out;
// if the report is still too long, docs, facts and evidence are dropped in
// that order, again with a note. Rule docs are Markdown and go through
// MarkdownDoc (no raw HTML, images, unsafe links or mentions). Every string
// from a trace goes through MarkdownText: HTML metacharacters as entities,
// Markdown punctuation (including backticks and table pipes) with
// backslashes, mentions and references broken. A footer
// says which stepdoctor version, command line and rule pack made the report.
func Markdown(w io.Writer, r *engine.Result) error {
	if r == nil {
		return fmt.Errorf("render markdown: %w", errNilResult)
	}
	foc := focusRanks(r, rankTable(r))
	views := shownViews(buildViews(r), foc)
	about := buildAbout(r.About)
	limit := MarkdownLimit - len(about.markdownFooter(""))
	var out string
	for i, lim := range mdLevels {
		out = renderMarkdown(views, foc, r.Notes, buildBaseline(r), r.Skipped, ruleErrorViews(r), lim, i > 0)
		if len(out) <= limit {
			break
		}
	}
	if len(out) > limit {
		out = cutMarkdown(out, limit)
	}
	out = about.markdownFooter(out)
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// cutMarkdown is the last resort: cut at a line boundary and say so.
func cutMarkdown(s string, max int) string {
	const note = "\n\n> **Report truncated to fit a comment.** Render the HTML or JSON report for everything.\n"
	limit := max - len(note)
	cut := strings.LastIndexByte(s[:limit], '\n')
	if cut < 0 {
		cut = limit
	}
	return s[:cut] + note
}

func renderMarkdown(views []traceView, foc rankFocus, notes []string, base *baselineView, skipped []engine.Skipped, ruleErrs []ruleErrorView, lim mdLimits, reduced bool) string {
	var b strings.Builder
	b.WriteString("# stepdoctor report\n\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "> **Note:** %s\n\n", mdText(n))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "> [!WARNING]\n> %d input file(s) were skipped and are not in this report:\n", len(skipped))
		for _, sk := range skipped {
			fmt.Fprintf(&b, "> - %s: %s\n", mdText(sk.Path), mdText(sk.Reason))
		}
		b.WriteString("\n")
	}
	ruleErrorsMarkdown(&b, ruleErrs)
	if reduced {
		b.WriteString("> Some detail was left out to fit a comment; the HTML and JSON reports have everything.\n\n")
	}
	baselineMarkdown(&b, base)
	if len(views) == 0 {
		b.WriteString("No traces were analysed.\n")
		return b.String()
	}
	many := len(views) > 1 || foc.Hidden > 0 // a section per trace, a list of them first
	if many {
		if foc.Hidden > 0 {
			fmt.Fprintf(&b, "%d traces analysed; the %d ranks below are shown in full.\n\n", len(views)+foc.Hidden, len(views))
		} else {
			fmt.Fprintf(&b, "%d traces analysed.\n\n", len(views))
		}
		b.WriteString("| # | Input | Rank | Findings | Verdict |\n|---:|---|---|---:|---|\n")
		for _, v := range views {
			rank := v.Rank
			if rank == "" {
				rank = nullMark
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %d | %s |\n", v.Index+1, mdCell(v.Path), mdCell(rank), len(v.Findings), mdCell(v.Verdict))
		}
		b.WriteString("\n")
	}
	if len(foc.Rows) > 0 {
		mdRankTable(&b, foc)
	}
	for _, v := range views {
		mdTrace(&b, v, lim, many)
	}
	return b.String()
}

func mdTrace(b *strings.Builder, v traceView, lim mdLimits, many bool) {
	if many {
		fmt.Fprintf(b, "## Trace %d: %s\n\n", v.Index+1, mdText(v.Path))
	} else {
		fmt.Fprintf(b, "## Trace: %s\n\n", mdText(v.Path))
	}
	if v.Repaired {
		b.WriteString("> [!WARNING]\n> **This trace was repaired; figures may be partial.** The input was damaged and the reader recovered what it safely could; see Trace health.\n\n")
	}
	b.WriteString("| | |\n|---|---|\n")
	input := mdCell(v.Path)
	if v.Size != "" {
		input += " (" + mdCell(v.Size) + ")"
	}
	fmt.Fprintf(b, "| Input | %s |\n", input)
	fmt.Fprintf(b, "| Device | %s |\n", mdCell(v.DeviceLabel))
	if v.Rank != "" {
		fmt.Fprintf(b, "| Rank | %s |\n", mdCell(v.Rank))
	}
	fmt.Fprintf(b, "| Steps | %s |\n", mdCell(v.StepsLabel))
	fmt.Fprintf(b, "| Window | %s |\n\n", v.Window)
	fmt.Fprintf(b, "**Verdict:** %s.\n\n", mdText(v.Verdict))
	mdTimeline(b, v)

	mdFindings(b, v, lim)
	mdSeries(b, v, lim)
	mdMemory(b, v, lim)
	mdLabels(b, v, lim)
	mdFacts(b, v, lim)
	mdNotEvaluated(b, v, lim)
	mdHealth(b, v, lim)
}

func mdFindings(b *strings.Builder, v traceView, lim mdLimits) {
	fmt.Fprintf(b, "### Findings (%d)\n\n", len(v.Findings))
	defer mdMinor(b, v)
	if len(v.Findings) == 0 {
		if len(v.Minor) == 0 {
			b.WriteString("No rule fired on this trace.\n\n")
		}
		return
	}
	shown := v.Findings
	if len(shown) > lim.findings {
		shown = shown[:lim.findings]
	}
	for _, f := range shown {
		fmt.Fprintf(b, "#### %d. %s: %s\n\n", f.Rank, mdText(severityLabel(f.Severity)), mdText(f.Title))
		fmt.Fprintf(b, "**Impact %s %s** · confidence %s · rule %s", f.Impact, v.OfTime, mdText(f.Confidence), mdCode(f.Rule))
		if f.Category != "" {
			fmt.Fprintf(b, " · %s", mdText(f.Category))
		}
		b.WriteString("\n\n")
		if f.Message != "" {
			b.WriteString(mdText(f.Message) + "\n\n")
		}
		if lim.evidence && (len(f.Evidence) > 0 || len(f.Examples) > 0) {
			b.WriteString("<details><summary>Evidence</summary>\n\n")
			if len(f.Evidence) > 0 {
				b.WriteString("| Evidence | Value |\n|---|---:|\n")
				for _, e := range f.Evidence {
					fmt.Fprintf(b, "| %s | %s |\n", mdCode(e.Name), mdCell(e.Value))
				}
				b.WriteString("\n")
			}
			if len(f.Examples) > 0 && lim.examples > 0 {
				ex := f.Examples
				if len(ex) > lim.examples {
					ex = ex[:lim.examples]
				}
				b.WriteString("| Example event | Start (trace clock) | Offset in window | Duration | pid | tid |\n|---|---:|---:|---:|---|---|\n")
				for _, e := range ex {
					fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(e.Name), e.Start, e.Offset, e.Dur, mdCell(e.PID), mdCell(e.TID))
				}
				b.WriteString("\n")
				if len(ex) < len(f.Examples) {
					fmt.Fprintf(b, "_Showing %d of %d example events._\n\n", len(ex), len(f.Examples))
				}
			} else if len(f.Examples) > 0 {
				fmt.Fprintf(b, "_%d example events left out to fit a comment._\n\n", len(f.Examples))
			}
			b.WriteString("</details>\n\n")
		}
		if lang, code := f.FixLang, f.Fix; code != "" {
			fence := strings.Repeat("`", max(3, longestRun(code, '`')+1))
			fmt.Fprintf(b, "**Fix:**\n\n%s%s\n%s\n%s\n\n", fence, mdInfo(lang), code, fence)
		}
		if lim.docs && (strings.TrimSpace(f.Doc) != "" || len(f.References) > 0) {
			b.WriteString("<details><summary>Why it matters and how to fix it</summary>\n\n")
			if doc := strings.TrimSpace(f.Doc); doc != "" {
				b.WriteString(MarkdownDoc(doc) + "\n\n")
			}
			if len(f.References) > 0 {
				b.WriteString("**References**\n\n")
				for _, ref := range f.References {
					b.WriteString("- " + mdRef(ref) + "\n")
				}
				b.WriteString("\n")
			}
			b.WriteString("</details>\n\n")
		}
	}
	if len(shown) < len(v.Findings) {
		rest := v.Findings[len(shown):]
		fmt.Fprintf(b, "_%d more findings, shown in brief:_\n\n", len(rest))
		b.WriteString("| # | Severity | Finding | Impact |\n|---:|---|---|---:|\n")
		for i, f := range rest {
			if i >= 20 {
				fmt.Fprintf(b, "\n_… and %d more; see the HTML or JSON report._\n", len(rest)-i)
				break
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", f.Rank, mdCell(severityLabel(f.Severity)), mdCell(f.Title), f.Impact)
		}
		b.WriteString("\n")
	}
}

func mdFacts(b *strings.Builder, v traceView, lim mdLimits) {
	if v.FactsMissing {
		b.WriteString("### Facts\n\nNo facts were derived from this trace.\n\n")
		return
	}
	if !lim.facts {
		fmt.Fprintf(b, "### Facts\n\n_%d facts left out to fit a comment; see the HTML or JSON report._\n\n", len(v.Facts))
		return
	}
	b.WriteString("### Facts\n\n")
	fmt.Fprintf(b, "<details><summary>All facts (%d, %d not measured)</summary>\n\n", len(v.Facts), v.NullFacts)
	b.WriteString("| Fact | Value |\n|---|---:|\n")
	for _, f := range v.Facts {
		fmt.Fprintf(b, "| %s | %s |\n", mdCode(f.Name), mdCell(f.Value))
	}
	b.WriteString("\n")
	if v.NullFacts > 0 {
		fmt.Fprintf(b, "%s = %s (null).\n\n", nullMark, nullNote)
	}
	b.WriteString("</details>\n\n")
}

func mdNotEvaluated(b *strings.Builder, v traceView, lim mdLimits) {
	if len(v.NotEvaluated) == 0 {
		return
	}
	fmt.Fprintf(b, "### Not evaluated (%d)\n\n", len(v.NotEvaluated))
	b.WriteString("These rules need facts this trace could not give.\n\n")
	if lim.notEval == 0 {
		b.WriteString("_List left out to fit a comment; see the HTML or JSON report._\n\n")
		return
	}
	shown := v.NotEvaluated
	if len(shown) > lim.notEval {
		shown = shown[:lim.notEval]
	}
	b.WriteString("| Rule | Missing facts | How to make it evaluable |\n|---|---|---|\n")
	for _, ne := range shown {
		name := mdCode(ne.Rule)
		if ne.Title != "" {
			name = mdCell(ne.Title) + " (" + mdCode(ne.Rule) + ")"
		}
		missing := make([]string, len(ne.Missing))
		for i, m := range ne.Missing {
			missing[i] = mdCode(m)
		}
		hint := ne.Hint
		if hint == "" {
			hint = nullMark
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, strings.Join(missing, ", "), mdCell(hint))
	}
	b.WriteString("\n")
	if len(shown) < len(v.NotEvaluated) {
		fmt.Fprintf(b, "_Showing %d of %d rules._\n\n", len(shown), len(v.NotEvaluated))
	}
}

func mdHealth(b *strings.Builder, v traceView, lim mdLimits) {
	h := v.Health
	b.WriteString("### Trace health\n\n")
	fmt.Fprintf(b, "Events read %d, kept %d, dropped %d.", h.EventsRead, h.EventsKept, h.Dropped)
	if h.Repaired {
		b.WriteString(" **Repaired: figures may be partial.**")
	}
	b.WriteString("\n\n")
	if len(h.Diagnostics) == 0 {
		b.WriteString("No diagnostics.\n\n")
		return
	}
	shown := h.Diagnostics
	if len(shown) > lim.diagnostics {
		shown = shown[:lim.diagnostics]
	}
	b.WriteString("| Kind | Reason | Message | Byte offset | Count |\n|---|---|---|---:|---:|\n")
	for _, d := range shown {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d |\n", mdCell(string(d.Kind)), mdCode(d.Reason), mdCell(d.Message), offsetText(d.Offset), d.Count)
	}
	b.WriteString("\n")
	if len(shown) < len(h.Diagnostics) {
		fmt.Fprintf(b, "_Showing %d of %d diagnostics; the JSON report has all._\n\n", len(shown), len(h.Diagnostics))
	}
}

// mdText escapes s for inline Markdown on one line: HTML metacharacters
// become entities, Markdown punctuation that could start emphasis, links,
// code, math, strikethrough or a table cell gets a backslash, and a leading
// character that could start a block (list, heading) is escaped too;
// mentions and references are broken (breakMentions).
func mdText(s string) string {
	s = breakMentions(strings.TrimLeft(clean(s), " "))
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '~', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" {
		return out
	}
	switch out[0] {
	case '#', '-', '+', '=':
		return "\\" + out
	}
	// "1." or "1)" would start an ordered list.
	if rest := strings.TrimLeft(out, "0123456789"); len(rest) < len(out) && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, ")")) &&
		(len(rest) == 1 || rest[1] == ' ') {
		return out[:len(out)-len(rest)] + "\\" + rest
	}
	return out
}

// mdCell escapes s for a GFM table cell; empty becomes nullMark.
func mdCell(s string) string {
	if strings.TrimSpace(s) == "" {
		return nullMark
	}
	return mdText(s)
}

// mdCode shows an identifier (rule id, fact name) literally. Identifiers
// with characters that would need escaping inside a code span fall back to
// escaped text.
func mdCode(s string) string {
	s = clean(s)
	if s == "" {
		return nullMark
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '/' || r == ':') {
			return mdText(s)
		}
	}
	return "`" + s + "`"
}

// mdRef renders a reference: http(s) URLs as autolinks, anything else as text.
func mdRef(ref string) string {
	ref = clean(strings.TrimSpace(ref))
	if isWebURL(ref) && !strings.ContainsAny(ref, "<> `\"") {
		return "<" + ref + ">"
	}
	return mdText(ref)
}

func isWebURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// mdInfo keeps a fence info string only when it is a plain language name.
func mdInfo(lang string) string {
	for _, r := range lang {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+') {
			return ""
		}
	}
	return lang
}

// mdTimeline writes one line on the GPU timeline: busy share and the idle
// gaps by cause, largest first in facts.IdleCauses order.
func mdTimeline(b *strings.Builder, v traceView) {
	s := v.Series
	if len(s.Timeline) == 0 || s.WindowUS <= 0 {
		return
	}
	parts := []string{"busy " + s.Busy}
	for _, ic := range s.Idle {
		parts = append(parts, fmt.Sprintf("idle on %s %s", mdText(ic.Label), ic.Share))
	}
	fmt.Fprintf(b, "**GPU timeline** (%s): %s.\n\n", s.Window, strings.Join(parts, ", "))
}

// mdSeries writes the per-step breakdown and the kernel and operator
// tables, each only when the facts carry it.
func mdSeries(b *strings.Builder, v traceView, lim mdLimits) {
	s := v.Series
	defer mdCollectives(b, s.CollRows)
	if len(s.StepRoles) == 0 && len(s.TopKernels) == 0 && len(s.TopOps) == 0 && len(s.PhaseRows) == 0 {
		return
	}
	b.WriteString("### Where the time goes\n\n")
	mdPhases(b, s)
	if len(s.StepRoles) > 0 {
		fmt.Fprintf(b, "Share of step time over %s:\n\n", stepCount(len(s.Steps)))
		b.WriteString("| Role | Per step | Share |\n|---|---:|---:|\n")
		for _, rt := range s.RoleRows {
			fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(rt.Label), rt.PerStep, rt.Share)
		}
		b.WriteString("\n")
		if lim.tableRows > 0 {
			rows := s.StepRows
			if len(rows) > lim.tableRows {
				rows = rows[:lim.tableRows]
			}
			fmt.Fprintf(b, "<details><summary>Per-step breakdown (%s)</summary>\n\n", stepCount(len(s.Steps)))
			b.WriteString("| Step | Duration |")
			sep := "|---|---:|"
			for _, rt := range s.RoleRows {
				b.WriteString(" " + mdCell(rt.Label) + " |")
				sep += "---:|"
			}
			b.WriteString("\n" + sep + "\n")
			for _, st := range rows {
				fmt.Fprintf(b, "| %s | %s |", mdCell(st.Label), st.Dur)
				for _, r := range st.Roles {
					b.WriteString(" " + r + " |")
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
			if len(rows) < len(s.Steps) {
				fmt.Fprintf(b, "_Showing %d of %d steps._\n\n", len(rows), len(s.Steps))
			}
			b.WriteString("</details>\n\n")
		}
	}
	if len(s.TopKernels) > 0 {
		b.WriteString("**Top kernels by GPU time**\n\n")
		rows := s.KernelRows
		if len(rows) > max(lim.tableRows, 3) {
			rows = rows[:max(lim.tableRows, 3)]
		}
		b.WriteString("| Kernel | Calls | Total | Mean | Max | Share |\n|---|---:|---:|---:|---:|---:|\n")
		for _, k := range rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", mdCell(shorten(k.Name, 120)), k.Count, k.Total, k.Mean, k.Max, k.Share)
		}
		b.WriteString("\n")
		if len(rows) < len(s.TopKernels) {
			fmt.Fprintf(b, "_Showing %d of %d kernels; the HTML report lists all._\n\n", len(rows), len(s.TopKernels))
		}
	}
	if len(s.TopOps) > 0 {
		b.WriteString("**Top CPU operators by self time**\n\n")
		rows := s.OpRows
		if len(rows) > max(lim.tableRows, 3) {
			rows = rows[:max(lim.tableRows, 3)]
		}
		if s.OpDevice {
			b.WriteString("| Operator | Calls | Calls / step | Self CPU | Total CPU | Self device | Total device |\n|---|---:|---:|---:|---:|---:|---:|\n")
		} else {
			b.WriteString("| Operator | Calls | Calls / step | Self CPU | Total CPU |\n|---|---:|---:|---:|---:|\n")
		}
		for _, o := range rows {
			if s.OpDevice {
				fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", mdCell(shorten(o.Name, 120)), o.Calls, o.CallsPerStep,
					o.SelfCPU, o.TotalCPU, o.SelfDevice, o.TotalDevice)
				continue
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", mdCell(shorten(o.Name, 120)), o.Calls, o.CallsPerStep, o.SelfCPU, o.TotalCPU)
		}
		b.WriteString("\n")
		if len(rows) < len(s.TopOps) {
			fmt.Fprintf(b, "_Showing %d of %d operators; the HTML report lists all._\n\n", len(rows), len(s.TopOps))
		}
	}
}

// mdMinor lists the minor findings on one line.
func mdMinor(b *strings.Builder, v traceView) {
	if len(v.Minor) == 0 {
		return
	}
	parts := make([]string, len(v.Minor))
	for k, f := range v.Minor {
		parts[k] = fmt.Sprintf("%s (%s, %s)", mdText(f.Title), mdCode(f.Rule), f.Impact)
	}
	fmt.Fprintf(b, "**Minor** (under 0.5%% %s each): %s.\n\n", v.OfTime, strings.Join(parts, "; "))
}

// mdPhases writes the role breakdown by inference phase (phase_breakdown)
// with the whole window of a trace without steps.
func mdPhases(b *strings.Builder, s seriesView) {
	if len(s.PhaseRows) == 0 {
		return
	}
	b.WriteString("**Time by role per inference phase** (share of each span's time; iterations named by the serving engine)\n\n")
	b.WriteString("| Span | Iterations | Time | Of window | GPU busy |")
	sep := "|---|---:|---:|---:|---:|"
	for _, c := range s.PhaseRoles {
		b.WriteString(" " + mdCell(c.Label) + " |")
		sep += "---:|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range s.PhaseRows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |", mdCell(r.Label), r.Spans, r.Time, r.Window, r.Busy)
		for _, x := range r.Roles {
			b.WriteString(" " + x + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// mdCollectives writes the collectives table (collective_stats).
func mdCollectives(b *strings.Builder, rows []collRow) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("**Collectives** (communication kernels in the window by kind and process group; bus bandwidth by the NCCL tests' formulas for the group size)\n\n")
	b.WriteString("| Collective | Group | Calls | Bytes | Time | Exposed | Alg. bandwidth | Bus bandwidth |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(r.Kind), mdCell(r.Group), r.Count, mdCell(r.Bytes), r.Time, r.Exposed, r.AlgBW, r.BusBW)
	}
	b.WriteString("\n")
}

// mdMemory writes the memory section: one line per device, the device
// table and, within the row limit, each device's per-step table.
func mdMemory(b *strings.Builder, v traceView, lim mdLimits) {
	mem := v.Series.Memory
	if len(mem) == 0 {
		return
	}
	b.WriteString("### Memory\n\n")
	for _, m := range mem {
		fmt.Fprintf(b, "- %s.", mdText(m.Summary))
		if m.StartNote != "" {
			fmt.Fprintf(b, " Note: %s.", mdText(m.StartNote))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| Device | Events | Peak allocated | At | Operator at the peak | Reserved at the peak | Cached, unallocated | Max reserved | Allocations / step |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, m := range mem {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(m.Device), m.Events, m.Peak, m.PeakAt, mdCell(shorten(m.PeakOp, 120)), m.Reserved, m.Fragmentation, m.MaxReserved, m.AllocsPerStep)
	}
	b.WriteString("\n")
	if lim.tableRows == 0 {
		return
	}
	for _, m := range mem {
		if len(m.Steps) == 0 {
			continue
		}
		rows := m.Steps[:min(len(m.Steps), lim.tableRows)]
		fmt.Fprintf(b, "<details><summary>%s per step (%d steps)</summary>\n\n", mdText(m.Device), len(m.Steps))
		b.WriteString("| Step | Allocations | Peak allocated | Allocated at its end |\n|---|---:|---:|---:|\n")
		for _, st := range rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s |\n", mdCell(st.Label), st.Allocs, st.Peak, st.AtEnd)
		}
		b.WriteString("\n")
		if len(rows) < len(m.Steps) {
			fmt.Fprintf(b, "_Showing %d of %d steps._\n\n", len(rows), len(m.Steps))
		}
		b.WriteString("</details>\n\n")
	}
}

// mdLabels writes the record_function label and nn.Module tables.
func mdLabels(b *strings.Builder, v traceView, lim mdLimits) {
	s := v.Series
	if len(s.Labels) == 0 && len(s.Modules) == 0 {
		return
	}
	b.WriteString("### Labels and modules\n\n")
	b.WriteString("Host time is the union of the spans in the window; GPU time sums the primary GPU's kernels launched from inside them (by correlation id); GPU span is the union of the label's gpu_user_annotation ranges. A module's time includes its submodules'.\n\n")
	n := max(lim.tableRows, 3)
	if len(s.Labels) > 0 {
		rows := s.Labels[:min(len(s.Labels), n)]
		b.WriteString("| record_function label | Calls | Host time | Host / step | Share | GPU time | Kernels | GPU span |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, l := range rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %d | %s |\n", mdCell(shorten(l.Name, 120)), l.Calls, l.CPU, l.PerStep, l.Share, l.GPU, l.Kernels, l.GPUSpan)
		}
		b.WriteString("\n")
		if len(rows) < len(s.Labels) {
			fmt.Fprintf(b, "_Showing %d of %d labels; the HTML report lists %d._\n\n", len(rows), len(s.Labels), len(s.Labels))
		}
	}
	if len(s.Modules) > 0 {
		rows := s.Modules[:min(len(s.Modules), n)]
		b.WriteString("| nn.Module (path) | Calls | Host time | Host / step | Share | GPU time | Kernels |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, l := range rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %d |\n", mdCell(shorten(l.Name, 160)), l.Calls, l.CPU, l.PerStep, l.Share, l.GPU, l.Kernels)
		}
		b.WriteString("\n")
		if len(rows) < len(s.Modules) {
			fmt.Fprintf(b, "_Showing %d of %d modules; the HTML report lists %d._\n\n", len(rows), len(s.Modules), len(s.Modules))
		}
	}
}

// ruleErrorsMarkdown writes the "Rule errors" section, when a rule failed.
func ruleErrorsMarkdown(b *strings.Builder, ruleErrs []ruleErrorView) {
	if len(ruleErrs) == 0 {
		return
	}
	fmt.Fprintf(b, "## Rule errors (%d)\n\n%s\n\n", len(ruleErrs), mdText(ruleErrorsHeading(len(ruleErrs))))
	for _, e := range ruleErrs {
		if e.Rule == "" {
			fmt.Fprintf(b, "- %s: %s\n", mdText(e.Trace), mdText(e.Message))
			continue
		}
		fmt.Fprintf(b, "- %s (%s) on %s: %s\n", mdCode(e.Rule), mdText(e.Source), mdText(e.Trace), mdText(e.Message))
	}
	b.WriteString("\n")
}

// baselineMarkdown writes the --baseline comparison, when there is one.
func baselineMarkdown(b *strings.Builder, v *baselineView) {
	if v == nil {
		return
	}
	fmt.Fprintf(b, "## Baseline\n\n%s\n\n", mdText(v.Heading))
	for _, p := range v.Pairs {
		fmt.Fprintf(b, "- **%s**: %s\n", mdText(p.Title), mdText(p.Verdict))
		for _, w := range p.Warnings {
			fmt.Fprintf(b, "  - Warning: %s\n", mdText(w))
		}
		for _, r := range p.Regressions {
			fmt.Fprintf(b, "  - **Regression:** %s\n", mdText(r))
		}
	}
	if v.HiddenLine != "" {
		fmt.Fprintf(b, "- %s\n", mdText(v.HiddenLine))
	}
	if v.Unpaired != "" {
		fmt.Fprintf(b, "- **Not compared:** %s\n", mdText(v.Unpaired))
	}
	b.WriteString("\n")
}
