package reports

import (
	"bytes"
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The escapers every renderer uses for text it did not write itself: trace
// strings, script text, ignore-comment reasons, file names, rule docs.
//
//   - MarkdownText: one line of inline Markdown that shows s literally: no
//     markup, no links, images or raw HTML, and @mentions, #123 and
//     owner/repo#123 references and GH-123 broken with a zero-width joiner
//     so a pull-request comment notifies and links nobody.
//   - MarkdownCode: an identifier in a code span, else MarkdownText.
//   - MarkdownRef: a web URL as an autolink, anything else as text.
//   - MarkdownDoc: a Markdown document (a rule's doc) kept as Markdown, but
//     with raw HTML turned into text, images turned into links, unsafe link
//     schemes (entity-encoded ones included) defused, and mentions and
//     references broken; a doc that still parses to anything unsafe is shown
//     as escaped text instead.
//   - TerminalText: one line for a terminal: control characters (ANSI
//     escapes, NUL, bidi overrides) removed, newlines and tabs as spaces,
//     invalid UTF-8 replaced, so a file name cannot forge an output line.
//   - SARIFText, SARIFDocText: a SARIF 2.1.0 plain-text message string
//     (one line, or a multi-line doc): control characters removed as for
//     TerminalText, mentions and references broken as for MarkdownText,
//     and literal square brackets escaped as SARIF 2.1.0 §3.11.6 requires,
//     so no text forms an embedded link.

// zwj is the zero-width joiner put after '@', '#' or "GH" to break a
// mention or reference without changing what a reader sees.
const zwj = '\u200d'

// MarkdownText escapes s for inline Markdown on one line.
func MarkdownText(s string) string { return mdText(s) }

// MarkdownCode shows an identifier literally (see mdCode).
func MarkdownCode(s string) string { return mdCode(s) }

// MarkdownRef renders a reference (see mdRef).
func MarkdownRef(ref string) string { return mdRef(ref) }

// TerminalText makes s safe on one line of a terminal.
func TerminalText(s string) string { return clean(s) }

// SARIFText escapes s for a SARIF 2.1.0 plain-text message string on one
// line (result message.text, a rule's shortDescription and fullDescription,
// notification messages). Control characters are removed (C0 and C1
// controls, ANSI escapes, NUL, DEL, the bidi embeddings and overrides
// U+202A–U+202E and isolates U+2066–U+2069, U+2028 and U+2029), newlines
// and tabs become spaces and invalid UTF-8 is replaced; @mentions and #123,
// owner/repo#123 and GH-123 references are broken with a zero-width joiner
// (see MarkdownText). SARIF 2.1.0 §3.11.6 ("Messages with embedded links")
// reads "[text](uri)" in a plain-text message as a link and requires literal
// '[' and ']' to be escaped: each is written "\[" or "\]", and each
// backslash right before one is doubled, so text from a trace, script or
// team rule cannot form a link a SARIF viewer would follow. Other
// characters, '<' and '&' included, are kept: a plain-text message is not
// HTML or Markdown.
func SARIFText(s string) string {
	return sarifBrackets(breakMentions(clean(s)))
}

// SARIFDocText is SARIFText for a multi-line plain-text string (a rule
// doc as help.text): newlines and tabs are kept, a carriage return becomes
// a newline, and the rest is escaped as SARIFText escapes it (controls and
// bidi controls removed, mentions broken, '[' and ']' escaped as SARIF
// 2.1.0 §3.11.6 requires).
func SARIFDocText(s string) string {
	return sarifBrackets(breakMentions(cleanDoc(s)))
}

// sarifBrackets escapes literal square brackets for a SARIF plain-text
// message (SARIF 2.1.0 §3.11.6): '[' as "\[", ']' as "\]", and every
// backslash of a run that ends right before a bracket doubled, so the
// escaped text reads back as written.
func sarifBrackets(s string) string {
	if !strings.ContainsAny(s, "[]") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '[', ']':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\\':
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			n := j - i
			if j < len(s) && (s[j] == '[' || s[j] == ']') {
				n *= 2
			}
			b.WriteString(strings.Repeat(`\`, n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isWordRune reports whether r can be part of a user, team or repository
// name before an '@' or '#' (which then is not a mention or reference).
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isRefName is a character of a repository name (owner/repo#1).
func isRefName(r rune) bool { return isWordRune(r) || r == '.' || r == '-' }

// breakMentions puts a zero-width joiner after every '@' that starts a
// mention (not preceded by a word character: a@b.c is an address), after a
// '#' before a digit that starts a reference (#12, owner/repo#12, not
// Step#12), and after "GH" in GH-12.
func breakMentions(s string) string {
	if !strings.ContainsAny(s, "@#-") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := func(i int) rune {
		if i == 0 {
			return ' '
		}
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		return r
	}
	for i, r := range s {
		b.WriteRune(r)
		next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
		switch r {
		case '@':
			if !isWordRune(prev(i)) && next != zwj {
				b.WriteRune(zwj)
			}
		case '#':
			if next >= '0' && next <= '9' && (!isWordRune(prev(i)) || repoBefore(s[:i])) {
				b.WriteRune(zwj)
			}
		case 'H', 'h':
			if next == '-' && i > 0 && (s[i-1] == 'G' || s[i-1] == 'g') && !isWordRune(prev(i-1)) {
				if rest := s[i+2:]; rest != "" && rest[0] >= '0' && rest[0] <= '9' {
					b.WriteRune(zwj)
				}
			}
		}
	}
	return b.String()
}

// repoBefore reports whether s ends with "owner/repo" (a cross-repository
// reference follows).
func repoBefore(s string) bool {
	j := len(s)
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		if !isRefName(r) {
			break
		}
		j -= n
	}
	return j < len(s) && j > 0 && s[j-1] == '/'
}

// cleanDoc removes control characters from a multi-line doc, keeping
// newlines and tabs.
func cleanDoc(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r == '\r' {
			return '\n'
		}
		if isCtl(r) {
			return -1
		}
		return r
	}, s)
}

// MarkdownDoc returns a rule's Markdown doc safe to embed in a Markdown
// report or catalogue.
func MarkdownDoc(doc string) string {
	doc = closeFences(cleanDoc(doc))
	out := defuseDoc(doc)
	if unsafeMarkdown(out) != "" {
		return docAsText(doc)
	}
	return out
}

// closeFences closes a fenced code block the doc leaves open (CommonMark:
// a fence of three or more backticks or tildes, indented at most three
// spaces, closed by one of the same character at least as long): in a
// report, an open fence would turn everything after the doc into code.
func closeFences(doc string) string {
	var open string // the open fence, "" outside code
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
			continue
		}
		n := len(t) - len(strings.TrimLeft(t, t[:1]))
		if n < 3 {
			continue
		}
		fence := t[:n]
		switch {
		case open == "":
			if t[0] == '`' && strings.Contains(t[n:], "`") {
				continue // not a fence: a backtick fence's info string has none
			}
			open = fence
		case fence[0] == open[0] && n >= len(open) && strings.TrimSpace(t[n:]) == "":
			open = ""
		}
	}
	if open == "" {
		return doc
	}
	return strings.TrimRight(doc, "\n") + "\n" + open + "\n"
}

// docAsText shows a doc as escaped text, one paragraph per paragraph.
func docAsText(doc string) string {
	var b strings.Builder
	for _, para := range strings.Split(doc, "\n\n") {
		if strings.TrimSpace(para) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(mdText(para))
	}
	return b.String()
}

// defuseDoc applies the edits MarkdownDoc needs, at the source positions the
// GFM parser reports: '<' of raw HTML as "&lt;", '!' of "![" outside code as
// "\!" (an image becomes a link), mentions and references broken in text;
// then dangerous link schemes spelled out literally are rewritten.
func defuseDoc(doc string) string {
	src := []byte(doc)
	root := docMarkdown.Parser().Parse(text.NewReader(src))
	const (
		plain = iota
		code
		html
		txt
	)
	kind := make([]byte, len(src))
	mark := func(s text.Segment, k byte) {
		for i := max(s.Start, 0); i < s.Stop && i < len(src); i++ {
			if kind[i] == plain || k == code {
				kind[i] = k
			}
		}
	}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.RawHTML:
			for i := 0; i < t.Segments.Len(); i++ {
				mark(t.Segments.At(i), html)
			}
		case *ast.HTMLBlock:
			lines := t.Lines()
			for i := 0; i < lines.Len(); i++ {
				mark(lines.At(i), html)
			}
			if t.HasClosure() {
				mark(t.ClosureLine, html)
			}
		case *ast.CodeSpan:
			for c := t.FirstChild(); c != nil; c = c.NextSibling() {
				if tx, ok := c.(*ast.Text); ok {
					mark(tx.Segment, code)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				mark(lines.At(i), code)
			}
		case *ast.Text:
			if _, inLink := t.Parent().(*ast.AutoLink); !inLink {
				mark(t.Segment, txt)
			}
		}
		return ast.WalkContinue, nil
	})
	var out bytes.Buffer
	out.Grow(len(src) + 16)
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case kind[i] == html && c == '<':
			out.WriteString("&lt;")
			i++
			continue
		case kind[i] != code && c == '!' && i+1 < len(src) && src[i+1] == '[' && !escapedAt(src, i):
			out.WriteString(`\!`)
			i++
			continue
		case kind[i] != code && c == '&' && !allowedEntity(src[i:]):
			out.WriteString("&amp;")
			i++
			continue
		case kind[i] == txt:
			j := i
			for j < len(src) && kind[j] == txt && !(src[j] == '!' && j+1 < len(src) && src[j+1] == '[') {
				j++
			}
			if j == i {
				j = i + 1
			}
			out.WriteString(escapeEntities(breakMentionsAt(doc, i, j)))
			i = j
			continue
		}
		out.WriteByte(c)
		i++
	}
	return blockDangerousLinks(out.String())
}

// breakMentionsAt breaks mentions in doc[i:j], looking one rune before i
// to tell a mention from an address.
func breakMentionsAt(doc string, i, j int) string {
	if i == 0 {
		return breakMentions(doc[:j])
	}
	_, n := utf8.DecodeLastRuneInString(doc[:i])
	start := i - n
	// keep the context rune(s) out of the result
	ctx := doc[start:i]
	s := breakMentions(doc[start:j])
	return strings.TrimPrefix(s, ctx)
}

// escapeEntities turns '&' into "&amp;" except in the entities a doc
// writer uses for punctuation, so an entity cannot spell a mention, a
// reference or a link scheme. Outside code "&amp;" reads as '&', so a URL's
// query string keeps its meaning.
func escapeEntities(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '&' && !allowedEntity([]byte(s[i:])) {
			b.WriteString("&amp;")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// allowedEntity reports whether s starts with an entity that spells
// harmless punctuation.
func allowedEntity(s []byte) bool {
	for _, e := range []string{"&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;"} {
		if bytes.HasPrefix(s, []byte(e)) {
			return true
		}
	}
	return false
}

// escapedAt reports whether src[i] follows an odd number of backslashes.
func escapedAt(src []byte, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && src[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// safeScheme reports whether a link destination is a relative link, a
// fragment, or an http, https or mailto URL.
func safeScheme(dest string) bool {
	d := strings.ToLower(linkTarget(dest))
	colon := strings.IndexByte(d, ':')
	if colon < 0 {
		return true
	}
	if k := strings.IndexAny(d, "/?#"); k >= 0 && k < colon {
		return true // the colon is in a path, query or fragment
	}
	switch d[:colon] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// linkTarget is a link destination as a browser sees it: backslash
// escapes and entities decoded, tabs and newlines removed, surrounding
// spaces and control characters trimmed.
func linkTarget(dest string) string {
	var b strings.Builder
	for i := 0; i < len(dest); i++ {
		c := dest[i]
		if c == '\\' && i+1 < len(dest) && unicode.IsPunct(rune(dest[i+1])) || c == '\\' && i+1 < len(dest) && unicode.IsSymbol(rune(dest[i+1])) {
			continue
		}
		b.WriteByte(c)
	}
	d := html.UnescapeString(b.String())
	d = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, d)
	return strings.TrimFunc(d, func(r rune) bool { return r <= ' ' })
}

// unsafeMarkdown parses md as GitHub would (GFM) and names the first thing
// untrusted text must never become: an image, raw HTML other than the
// reports' own <details> and <summary> tags, a link or autolink with an
// unsafe scheme, or a mention or reference in text. "" means none.
func unsafeMarkdown(md string) string {
	src := []byte(md)
	root := docMarkdown.Parser().Parse(text.NewReader(src))
	var why string
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Image:
			why = "image"
		case *ast.RawHTML:
			var b []byte
			for i := 0; i < t.Segments.Len(); i++ {
				seg := t.Segments.At(i)
				b = append(b, seg.Value(src)...)
			}
			if !ownTag(string(b)) {
				why = "raw HTML " + string(b)
			}
		case *ast.HTMLBlock:
			why = "HTML block"
		case *ast.Link:
			if !safeScheme(string(t.Destination)) {
				why = "link to " + string(t.Destination)
			}
		case *ast.AutoLink:
			if !safeScheme(string(t.URL(src))) {
				why = "autolink to " + string(t.URL(src))
			}
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeBlock && n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeInline {
			if s := html.UnescapeString(inlineText(n, src)); breakMentions(s) != s {
				why = "mention or reference in " + s
			}
		}
		if why != "" {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return why
}

// ownTag is one of the tags the Markdown reports write themselves.
func ownTag(s string) bool {
	switch s {
	case "<details>", "</details>", "<summary>", "</summary>":
		return true
	}
	return false
}

// inlineText is the text a reader sees in a block's inlines, with a space
// for each non-text inline (code, autolink) so words do not join.
func inlineText(n ast.Node, src []byte) string {
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
			case *ast.CodeSpan, *ast.AutoLink, *ast.RawHTML, *extast.TaskCheckBox:
				b.WriteByte(' ')
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}
