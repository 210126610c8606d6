package reports

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
)

// ErrUnknownFormat is wrapped by FormatFor and LookupFormat when a name or
// a path's extension names no format of the subcommand.
var ErrUnknownFormat = errors.New("unknown report format")

// Subcommands that render reports.
const (
	ForAnalyze = "analyze"
	ForDiff    = "diff"
	ForLint    = "lint"
)

// Format is one output format: its --format name, the -o extensions that
// choose it (lower case, first is the usual one) and its renderer for each
// subcommand that offers it (nil: that subcommand does not).
//
// Adding a format: write the renderers and add one entry to Formats; the
// flags, help texts, extension dispatch and error messages follow.
type Format struct {
	Name       string
	Extensions []string
	Analyze    func(w io.Writer, r *engine.Result, t Terminal) error
	Diff       func(w io.Writer, d *engine.DiffResult) error
	Lint       func(w io.Writer, r *engine.LintResult) error
}

// Formats is the registry of output formats, in the order help texts list
// them. The first format a subcommand offers is its default.
var Formats = []Format{
	{Name: "text", Extensions: []string{".txt"}, Analyze: Text, Diff: DiffText, Lint: LintText},
	{Name: "md", Extensions: []string{".md", ".markdown"}, Analyze: noColor(Markdown), Diff: DiffMarkdown, Lint: LintMarkdown},
	{Name: "html", Extensions: []string{".html", ".htm"}, Analyze: noColor(HTML), Diff: DiffHTML},
	{Name: "json", Extensions: []string{".json"}, Analyze: noColor(JSON), Diff: DiffJSON, Lint: LintJSON},
	{Name: "sarif", Extensions: []string{".sarif"}, Analyze: noColor(AnalyzeSARIF), Lint: SARIF},
}

// Terminal says how the text format is shown: Color turns on ANSI
// colours, Cut shortens long messages (at a word boundary, with "…") to
// keep a terminal summary short. Both are off when writing to a file or a
// pipe, and the other formats ignore them.
type Terminal struct{ Color, Cut bool }

func noColor(render func(io.Writer, *engine.Result) error) func(io.Writer, *engine.Result, Terminal) error {
	return func(w io.Writer, r *engine.Result, _ Terminal) error { return render(w, r) }
}

// offers reports whether f has a renderer for the subcommand.
func (f Format) offers(cmd string) bool {
	switch cmd {
	case ForAnalyze:
		return f.Analyze != nil
	case ForDiff:
		return f.Diff != nil
	case ForLint:
		return f.Lint != nil
	}
	return false
}

// FormatsOf lists the formats a subcommand offers, in registry order.
func FormatsOf(cmd string) []Format {
	var out []Format
	for _, f := range Formats {
		if f.offers(cmd) {
			out = append(out, f)
		}
	}
	return out
}

// FormatNames is the list of a subcommand's format names for help texts
// and errors: "text, md, html or json".
func FormatNames(cmd string) string {
	var names []string
	for _, f := range FormatsOf(cmd) {
		names = append(names, f.Name)
	}
	return orList(names)
}

// ExtensionNames lists the usual -o extension of each of a subcommand's
// formats chosen by extension: ".md, .html, .json".
func ExtensionNames(cmd string) string {
	var exts []string
	for _, f := range FormatsOf(cmd) {
		if len(f.Extensions) > 0 {
			exts = append(exts, f.Extensions[0])
		}
	}
	return strings.Join(exts, ", ")
}

// LookupFormat returns the subcommand's format called name, or whose -o
// extension name is without its dot (--format txt as -o x.txt gives text).
func LookupFormat(cmd, name string) (Format, error) {
	for _, f := range FormatsOf(cmd) {
		if f.Name == name || slices.Contains(f.Extensions, "."+name) {
			return f, nil
		}
	}
	return Format{}, unknownFormat(fmt.Sprintf("parse --format: unknown format %q (want %s)", name, FormatNames(cmd)))
}

// unknownFormat is an error that is ErrUnknownFormat without repeating its
// text.
type unknownFormat string

func (e unknownFormat) Error() string { return string(e) }
func (e unknownFormat) Unwrap() error { return ErrUnknownFormat }

// FormatFor picks a subcommand's format from a path's extension,
// case-insensitively (analyze: ".txt" gives text, ".md" and ".markdown"
// md, ".html" and ".htm" html, ".json" json, ".sarif" sarif). Any other extension is an error naming the
// path and the extensions that work. ".txt" gives text.
func FormatFor(cmd, path string) (Format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	var all []string
	for _, f := range FormatsOf(cmd) {
		for _, e := range f.Extensions {
			if e == ext {
				return f, nil
			}
			all = append(all, e)
		}
	}
	return Format{}, fmt.Errorf("choose format for %q (want %s): %w", path, orList(all), ErrUnknownFormat)
}

// orList joins "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
