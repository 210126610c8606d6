package reports

import (
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/version"
)

// InformationURI is the project's home, in SARIF tool.driver and footers.
const InformationURI = "https://github.com/stepdoctor/stepdoctor"

// aboutView is what every report says about how it was made: the version
// of stepdoctor, the command line and the rule pack. Command and Rules are
// "" when the result carries no About (a report rendered by a test or a
// library caller).
type aboutView struct {
	Version  string   // "v1.2.0", "devel+3f2a9c1b7d4e-dirty"
	Command  string   // "stepdoctor analyze -o report.md log/"
	RulePack string   // "builtin sha256:0123456789ab"
	RuleDirs []string // team rule directories, as given
	Config   string   // configuration file applied
	Rules    string   // RulePack, team rule dirs and config in one phrase
}

func buildAbout(a *engine.About) aboutView {
	v := aboutView{Version: version.String()}
	if a == nil {
		return v
	}
	if a.Version != "" {
		v.Version = a.Version
	}
	// The command line and paths name files the user chose: a control
	// character in one (a newline, a terminal escape) is dropped here, for
	// every format.
	v.Command, v.RulePack, v.Config = clean(a.Command), clean(a.RulePack), clean(a.Config)
	for _, d := range a.RuleDirs {
		v.RuleDirs = append(v.RuleDirs, clean(d))
	}
	var parts []string
	if v.RulePack != "" {
		parts = append(parts, v.RulePack)
	}
	if len(v.RuleDirs) > 0 {
		parts = append(parts, "team rules "+strings.Join(v.RuleDirs, " "))
	}
	if v.Config != "" {
		parts = append(parts, "config "+v.Config)
	}
	v.Rules = strings.Join(parts, ", ")
	return v
}

// aboutJSON is the "stepdoctor" object of JSON reports.
type aboutJSON struct {
	Version  string   `json:"version"`
	Command  string   `json:"command"`
	RulePack string   `json:"rule_pack"`
	RuleDirs []string `json:"rule_dirs"`
	Config   string   `json:"config"`
}

func (v aboutView) json() aboutJSON {
	return aboutJSON{Version: v.Version, Command: v.Command, RulePack: v.RulePack, RuleDirs: nonNil(v.RuleDirs), Config: v.Config}
}

// markdownFooter appends the footer line of Markdown reports to doc after
// a thematic break (a blank line first, so the rule is not read as a
// heading underline), escaped.
func (v aboutView) markdownFooter(doc string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(doc, "\n"))
	b.WriteString("\n\n---\n\n*Made by stepdoctor " + mdText(v.Version))
	if v.Command != "" {
		b.WriteString(" with " + mdText(v.Command))
	}
	if v.Rules != "" {
		b.WriteString("; rules: " + mdText(v.Rules))
	}
	b.WriteString("*\n")
	return b.String()
}
