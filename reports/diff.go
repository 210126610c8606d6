package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Before/after reports (stepdoctor diff). One Markdown rendering is the
// source; HTML wraps it (through goldmark, raw HTML off) in a
// self-contained page; JSON is the DiffResult; Text is a compact summary.

// DiffMarkdown writes a GitHub-flavoured comparison: per trace pair the
// step-time speed-up, findings resolved / new / unchanged, and the facts
// that changed beyond the steps' own spread (the rest collapsed as noise).
// It fits a pull-request comment (MarkdownLimit bytes): a longer one (many
// ranks) is cut at a line and says so.
func DiffMarkdown(w io.Writer, d *engine.DiffResult) error {
	out := diffMarkdown(d, true)
	if len(out) > MarkdownLimit { // a comparison of many ranks
		out = cutMarkdown(out, MarkdownLimit)
	}
	_, err := io.WriteString(w, out)
	if err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return nil
}

// diffMarkdown renders the comparison; details puts the noise table in a
// <details> block (GitHub), else under a plain heading (for goldmark, which
// drops raw HTML).
func diffMarkdown(d *engine.DiffResult, details bool) string {
	var b strings.Builder
	b.WriteString("# stepdoctor diff\n\n")
	for _, u := range d.Unpaired {
		fmt.Fprintf(&b, "- unpaired %s\n", mdText(u))
	}
	if len(d.Unpaired) > 0 {
		b.WriteString("\n")
	}
	ruleErrorsMarkdown(&b, ruleErrorViewsOf(d.RuleErrors))
	for _, p := range d.Pairs {
		title := "Before → after"
		if p.Rank != nil {
			title = fmt.Sprintf("Rank %d", *p.Rank)
		}
		fmt.Fprintf(&b, "## %s\n\n%s → %s\n\n", title, mdText(p.Before.Path), mdText(p.After.Path))
		for _, w := range p.Warnings {
			fmt.Fprintf(&b, "> **Warning:** %s\n\n", mdText(w))
		}
		b.WriteString("**" + mdText(StepVerdictLine(p)) + "**\n\n")
		findingList(&b, "Resolved", "", p.Resolved)
		findingList(&b, "New", "", p.New)
		findingList(&b, "Unchanged", "", p.Unchanged)
		findingList(&b, "Inconclusive", "On one side only, and their rule failed on the other side (see Rule errors): neither resolved nor new.", p.Inconclusive)
		tableDiffMarkdown(&b, "Kernels", "total time per step", p.Kernels)
		tableDiffMarkdown(&b, "Operators", "self CPU time per step", p.Ops)
		var real, noise []engine.FactDelta
		for _, fd := range p.Facts {
			switch {
			case fd.Abs == nil:
				real = append(real, fd) // appeared or disappeared
			case fd.Noise:
				if *fd.Abs != 0 {
					noise = append(noise, fd)
				}
			default:
				real = append(real, fd)
			}
		}
		slices.SortStableFunc(real, func(a, b engine.FactDelta) int { return cmpRel(b) - cmpRel(a) })
		if len(real) > 0 {
			b.WriteString("| fact | before | after | change |\n|---|---:|---:|---:|\n")
			for _, fd := range real {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCode(fd.Name), diffValue(fd.Before, fd.Unit), diffValue(fd.After, fd.Unit), changeText(fd))
			}
			b.WriteString("\n")
		} else {
			b.WriteString("No fact changed beyond the noise.\n\n")
		}
		if len(noise) > 0 {
			summary := fmt.Sprintf("%d facts changed within the noise (±%.1f%%, the steps' own spread)", len(noise), 100*p.Noise)
			if details {
				fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n", summary)
			} else {
				fmt.Fprintf(&b, "### %s\n\n", summary)
			}
			b.WriteString("| fact | before | after | change |\n|---|---:|---:|---:|\n")
			for _, fd := range noise {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCode(fd.Name), diffValue(fd.Before, fd.Unit), diffValue(fd.After, fd.Unit), changeText(fd))
			}
			if details {
				b.WriteString("\n</details>")
			}
			b.WriteString("\n\n")
		}
	}
	return buildAbout(d.About).markdownFooter(b.String())
}

// cmpRel orders fact changes by size (relative, in permille).
func cmpRel(fd engine.FactDelta) int {
	if fd.Rel == nil {
		return math.MaxInt32
	}
	return int(math.Abs(*fd.Rel) * 1000)
}

// StepVerdictLine is the one-line step-time verdict of a pair: the medians
// (per sample when the batch sizes differ), the steps each side had, the
// trimmed means, and faster, slower, within noise or too few steps to
// judge, with the noise band.
func StepVerdictLine(p engine.PairDiff) string {
	c := p.Steps
	if c == nil {
		return "No step time on both sides (profile with a schedule and prof.step())"
	}
	us := func(v float64) string { return diffValue(&v, "us") }
	label, x, y := "Median step time", c.Before.MedianUS, c.After.MedianUS
	var parts []string
	switch {
	case c.PerSample:
		label, x, y = "Median time per sample", *c.Before.PerSampleUS, *c.After.PerSampleUS
		parts = append(parts, fmt.Sprintf("batch %d → %d, compared per sample", *c.Before.BatchSize, *c.After.BatchSize),
			fmt.Sprintf("median step %s → %s", us(c.Before.MedianUS), us(c.After.MedianUS)))
	case c.Before.BatchSize != nil && c.After.BatchSize != nil:
		parts = append(parts, fmt.Sprintf("batch %d", *c.After.BatchSize))
	}
	parts = append(parts, fmt.Sprintf("%d → %d steps", c.Before.Steps, c.After.Steps),
		fmt.Sprintf("trimmed mean %s → %s", us(c.Before.TrimmedMeanUS), us(c.After.TrimmedMeanUS)))
	head := fmt.Sprintf("%s %s → %s (%s)", label, us(x), us(y), strings.Join(parts, "; "))
	change := fmt.Sprintf("%.2fx faster", c.Factor())
	if c.LogRatio < 0 {
		change = fmt.Sprintf("%.2fx slower", c.Factor())
	}
	noise := fmt.Sprintf("noise ±%.1f%%", 100*p.Noise)
	var verdict string
	switch c.Verdict {
	case engine.VerdictFaster, engine.VerdictSlower:
		verdict = fmt.Sprintf("%s (%s)", change, noise)
	case engine.VerdictNoise:
		verdict = fmt.Sprintf("within noise (%s; medians %s)", noise, change)
	default:
		verdict = fmt.Sprintf("too few steps to judge (at least %d each; medians %s; noise unknown, ±%.1f%% assumed)", engine.MinSteps, change, 100*p.Noise)
	}
	return head + ": " + verdict
}

func findingList(b *strings.Builder, label, note string, fs []engine.FindingDelta) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "**%s findings**\n\n", label)
	if note != "" {
		b.WriteString(mdText(note) + "\n\n")
	}
	for _, f := range fs {
		fmt.Fprintf(b, "- %s (%s): %s, impact %s → %s\n", mdCode(f.Rule), mdText(string(f.Severity)), mdText(f.Title), pctText(f.ImpactBefore), pctText(f.ImpactAfter))
	}
	b.WriteString("\n")
}

func pctText(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

// diffValue formats a fact value by unit.
func diffValue(v *float64, unit string) string {
	if v == nil {
		return nullMark
	}
	return facts.Unit(unit).Format(*v)
}

func changeText(fd engine.FactDelta) string {
	switch {
	case fd.Before == nil:
		return "new"
	case fd.After == nil:
		return "gone"
	}
	mark := ""
	if def, _ := facts.LookupLeaf(fd.Name); !fd.Noise && def.Direction != facts.Neutral {
		mark = " (better)"
		if fd.Worse {
			mark = " (worse)"
		}
	}
	if fd.Rel == nil {
		return fmt.Sprintf("%+.3g%s", *fd.Abs, mark)
	}
	return fmt.Sprintf("%+.1f%%%s", 100**fd.Rel, mark)
}

// DiffJSON writes the DiffResult as indented JSON, with a "stepdoctor"
// object (version, command, rule pack) last.
func DiffJSON(w io.Writer, d *engine.DiffResult) error {
	if d == nil {
		return fmt.Errorf("render diff: %w", errNilResult)
	}
	b, err := json.MarshalIndent(struct {
		*engine.DiffResult
		Stepdoctor aboutJSON `json:"stepdoctor"`
	}{d, buildAbout(d.About).json()}, "", "  ")
	if err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return nil
}

var diffPage = template.Must(template.New("diff").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>stepdoctor diff</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2433;max-width:60rem;margin:1.5rem auto;padding:0 1rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:14px}th,td{border:1px solid #d9dee7;padding:.25rem .5rem}
td:nth-child(n+2){text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f6f9;padding:0 .2rem}
h2{border-top:1px solid #d9dee7;padding-top:1rem}@media print{details{display:block}}
</style></head><body>
{{.}}
</body></html>
`))

// DiffHTML writes the Markdown comparison as one self-contained HTML page.
func DiffHTML(w io.Writer, d *engine.DiffResult) error {
	var body bytes.Buffer
	conv := goldmark.New(goldmark.WithExtensions(extension.GFM)) // raw HTML stays off
	if err := conv.Convert([]byte(diffMarkdown(d, false)), &body); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	if err := diffPage.Execute(w, template.HTML(body.String())); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return nil
}

// DiffText writes a compact terminal summary.
func DiffText(w io.Writer, d *engine.DiffResult) error {
	var b strings.Builder
	for _, u := range d.Unpaired {
		fmt.Fprintf(&b, "unpaired %s\n", clean(u))
	}
	ruleErrorsText(&b, ruleErrorViewsOf(d.RuleErrors), func(_, s string) string { return s })
	for _, p := range d.Pairs {
		if p.Rank != nil {
			fmt.Fprintf(&b, "rank %d: ", *p.Rank)
		}
		fmt.Fprintf(&b, "%s -> %s\n", clean(p.Before.Path), clean(p.After.Path))
		for _, w := range p.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", clean(w))
		}
		fmt.Fprintf(&b, "  %s\n", StepVerdictLine(p))
		for _, g := range []struct {
			label string
			fs    []engine.FindingDelta
		}{{"resolved", p.Resolved}, {"new", p.New}} {
			for _, f := range g.fs {
				fmt.Fprintf(&b, "  %-9s %s (%s) %s -> %s\n", g.label, clean(f.Rule), clean(string(f.Severity)), pctText(f.ImpactBefore), pctText(f.ImpactAfter))
			}
		}
		for _, f := range p.Inconclusive {
			fmt.Fprintf(&b, "  not compared %s (%s) %s -> %s: the rule failed on the other side\n", clean(f.Rule), clean(string(f.Severity)), pctText(f.ImpactBefore), pctText(f.ImpactAfter))
		}
		n := 0
		for _, fd := range p.Facts {
			if fd.Abs != nil && !fd.Noise {
				n++
			}
		}
		fmt.Fprintf(&b, "  %d facts changed beyond the noise, %d findings unchanged\n", n, len(p.Unchanged))
		tableDiffText(&b, "kernels", p.Kernels)
		tableDiffText(&b, "ops", p.Ops)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return nil
}

// tableDiffMarkdown lists a kernel or operator table diff: one table with
// a row per name, grouped as added, removed, slower, faster.
func tableDiffMarkdown(b *strings.Builder, title, metric string, d engine.TableDiff) {
	groups := tableGroups(d)
	if len(groups) == 0 {
		return
	}
	fmt.Fprintf(b, "**%s** (%s, top %d of each change)\n\n", title, metric, engine.DiffTopN)
	b.WriteString("| change | name | before | after | delta |\n|---|---|---:|---:|---:|\n")
	for _, g := range groups {
		for _, td := range g.rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", g.label+outOfTop(td), mdText(shorten(td.Name, 120)), diffValue(td.BeforeUS, "us"), diffValue(td.AfterUS, "us"), signedUS(td.DeltaUS))
		}
	}
	b.WriteString("\n")
}

// tableDiffText prints a kernel or operator table diff, one name a line.
func tableDiffText(b *strings.Builder, what string, d engine.TableDiff) {
	for _, g := range tableGroups(d) {
		for _, td := range g.rows {
			fmt.Fprintf(b, "  %s %-7s %s %s -> %s (%s)%s\n", what, g.label, clean(shorten(td.Name, 80)), diffValue(td.BeforeUS, "us"), diffValue(td.AfterUS, "us"), signedUS(td.DeltaUS), outOfTop(td))
		}
	}
}

type tableGroup struct {
	label string
	rows  []engine.TimeDelta
}

func tableGroups(d engine.TableDiff) []tableGroup {
	var out []tableGroup
	for _, g := range []tableGroup{{"added", d.Added}, {"removed", d.Removed}, {"slower", d.Slower}, {"faster", d.Faster}} {
		if len(g.rows) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// outOfTop notes an added or removed name that the other side may list
// below its top rows.
func outOfTop(td engine.TimeDelta) string {
	if !td.OutOfTop {
		return ""
	}
	return fmt.Sprintf(" (other side lists only its top %d)", facts.TopRows)
}

func signedUS(v float64) string {
	if v >= 0 {
		return "+" + diffValue(&v, "us")
	}
	a := -v
	return "-" + diffValue(&a, "us")
}
