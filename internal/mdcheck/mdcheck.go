// Package mdcheck parses Markdown as GitHub does (CommonMark with the GFM
// extensions) and lists what hostile text must never turn into in a
// stepdoctor report: images, raw HTML other than the reports' own
// <details>/<summary> tags, links or autolinks with a scheme other than
// http, https or mailto (after entity decoding), and @mentions, #123,
// owner/repo#123 or GH-123 references in the text a reader sees. Tests of
// every Markdown output use it; it shares no code with the escapers it
// checks.
package mdcheck

import (
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

var (
	ownBlock      = regexp.MustCompile(`^\s*(<details>(<summary>[^<>]*</summary>)?|</details>|<summary>[^<>]*</summary>)\s*$`)
	mention       = regexp.MustCompile(`(?:^|[^\p{L}\p{N}_])@[\p{L}\p{N}_-]`)
	issueRef      = regexp.MustCompile(`(?:^|[^\p{L}\p{N}_])#[0-9]|/[\p{L}\p{N}_.-]+#[0-9]|(?i)(?:^|[^\p{L}\p{N}_])gh-[0-9]`)
	unescapePunct = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
	scheme        = regexp.MustCompile(`^([a-z][a-z0-9+.-]*):`)
)

// Problems returns one line per unsafe node in md; none means safe.
func Problems(md string) []string {
	src := []byte(md)
	root := gfm.Parser().Parse(text.NewReader(src))
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Image:
			add("image to %q", t.Destination)
		case *ast.RawHTML:
			var b strings.Builder
			for i := 0; i < t.Segments.Len(); i++ {
				seg := t.Segments.At(i)
				b.Write(seg.Value(src))
			}
			switch b.String() {
			case "<details>", "</details>", "<summary>", "</summary>":
			default:
				add("raw HTML %q", b.String())
			}
		case *ast.HTMLBlock:
			lines := t.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				if l := string(seg.Value(src)); !ownBlock.MatchString(l) {
					add("HTML block line %q", l)
				}
			}
		case *ast.Link:
			if !safe(string(t.Destination)) {
				add("link to %q", t.Destination)
			}
		case *ast.AutoLink:
			if u := string(t.URL(src)); !safe(u) {
				add("autolink to %q", u)
			}
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeBlock && n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeInline {
			s := html.UnescapeString(visible(n, src))
			if m := mention.FindString(s); m != "" {
				add("mention %q in %q", m, s)
			}
			if m := issueRef.FindString(s); m != "" {
				add("reference %q in %q", m, s)
			}
		}
		return ast.WalkContinue, nil
	})
	return out
}

func safe(dest string) bool {
	d := unescapePunct.ReplaceAllString(dest, "$1")
	d = strings.ToLower(html.UnescapeString(d))
	d = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, d)
	d = strings.TrimSpace(d)
	m := scheme.FindStringSubmatch(d)
	if m == nil {
		return true
	}
	switch m[1] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// visible is the text of a block's inlines as rendered, code and links
// as a space.
func visible(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				seg := t.Segment
				b.Write(seg.Value(src))
				if t.SoftLineBreak() || t.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			case *ast.CodeSpan, *ast.AutoLink, *ast.RawHTML:
				b.WriteByte(' ')
			default:
				if c.Type() == ast.TypeInline {
					walk(c)
				}
			}
		}
	}
	walk(n)
	return b.String()
}

// ControlChars lists the control characters (C0 but newline, DEL, C1, bidi
// overrides and isolates, line and paragraph separators) in s, which must
// never reach a terminal.
func ControlChars(s string) []string {
	var out []string
	for i, r := range s {
		switch {
		case r == '\n':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '\u2028', r == '\u2029',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			out = append(out, fmt.Sprintf("%U at byte %d", r, i))
		}
	}
	return out
}
