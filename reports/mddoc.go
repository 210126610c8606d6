package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// docMarkdown renders rule docs for the HTML report: GitHub-flavoured
// (tables, strikethrough, autolinks, task lists), raw HTML OFF (goldmark
// omits it unless html.WithUnsafe is given, which it never is here),
// dangerous link schemes dropped, images rendered as links so nothing is
// loaded from the network, and headings demoted below the finding heading.
var docMarkdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(
		parser.WithASTTransformers(util.Prioritized(demoteHeadings{}, 100)),
	),
	goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(imageAsLink{}, 100)),
	),
)

// renderDoc converts a rule's Markdown doc to safe HTML.
func renderDoc(doc string) (template.HTML, error) {
	var buf bytes.Buffer
	if err := docMarkdown.Convert([]byte(doc), &buf); err != nil {
		return "", fmt.Errorf("convert doc: %w", err)
	}
	return template.HTML(buf.String()), nil //nolint:gosec // goldmark output with raw HTML off
}

// demoteHeadings moves doc headings to h5/h6: the finding itself is an h4.
type demoteHeadings struct{}

func (demoteHeadings) Transform(node *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(node, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			h.Level = min(h.Level+4, 6)
		}
		return ast.WalkContinue, nil
	})
}

// imageAsLink renders ![alt](src) as a link to src labelled with the alt
// text, so a self-contained report never loads an image.
type imageAsLink struct{}

func (imageAsLink) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, renderImageAsLink)
}

func renderImageAsLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	dest := util.URLEscape(n.Destination, true)
	label := imageAlt(n, source)
	if len(label) == 0 {
		label = []byte("image")
	}
	if gmhtml.IsDangerousURL(dest) {
		_, _ = w.Write(util.EscapeHTML(label))
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<a class="img-link" href="`)
	_, _ = w.Write(util.EscapeHTML(dest))
	_, _ = w.WriteString(`">[image: `)
	_, _ = w.Write(util.EscapeHTML(label))
	_, _ = w.WriteString(`]</a>`)
	return ast.WalkSkipChildren, nil
}

// imageAlt collects the plain text under an image node.
func imageAlt(n ast.Node, source []byte) []byte {
	var out []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			out = append(out, t.Segment.Value(source)...)
		case *ast.String:
			out = append(out, t.Value...)
		default:
			out = append(out, imageAlt(c, source)...)
		}
	}
	return out
}

// Link destinations with schemes that run code or embed data. Inline links
// and images "](javascript:", reference definitions "[x]: javascript:" and
// autolinks "<javascript:" are matched; "mailto:" and web links are not.
var (
	dangerousInline = regexp.MustCompile(`(?i)(\]\(\s*<?)\s*(javascript|vbscript|data|file):`)
	dangerousRefDef = regexp.MustCompile(`(?im)^( {0,3}\[[^\]\n]+\]:\s*<?)\s*(javascript|vbscript|data|file):`)
	dangerousAuto   = regexp.MustCompile(`(?i)<(javascript|vbscript|data|file):`)
)

// blockDangerousLinks rewrites dangerous link schemes in a Markdown doc into
// harmless fragment links ("#blocked-javascript-..."), so the Markdown
// report is safe even where the viewer does not sanitise links.
func blockDangerousLinks(doc string) string {
	doc = dangerousInline.ReplaceAllString(doc, "${1}#blocked-${2}-")
	doc = dangerousRefDef.ReplaceAllString(doc, "${1}#blocked-${2}-")
	return dangerousAuto.ReplaceAllString(doc, "&lt;${1}:")
}

// fixSnippet returns the code change a rule doc proposes and its
// info-string language, or "" when the doc has none: the fenced code block
// whose info string names the variant ("```python variant=inference"), else
// the first block that names no variant, else the first block.
func fixSnippet(doc, variant string) (lang, code string) {
	var first, plain, chosen [2]string
	src := []byte(doc)
	root := docMarkdown.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fc, ok := n.(*ast.FencedCodeBlock)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		lines := fc.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(src))
		}
		s := strings.TrimRight(b.String(), "\n")
		if strings.TrimSpace(s) == "" {
			return ast.WalkContinue, nil
		}
		var info string
		if fc.Info != nil {
			info = strings.TrimSpace(string(fc.Info.Segment.Value(src)))
		}
		l, attrs, _ := strings.Cut(info, " ")
		v := variantOf(attrs)
		block := [2]string{l, s}
		if first[1] == "" {
			first = block
		}
		if v == "" && plain[1] == "" {
			plain = block
		}
		if variant != "" && v == variant {
			chosen = block
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for _, b := range [][2]string{chosen, plain, first} {
		if b[1] != "" {
			return b[0], b[1]
		}
	}
	return "", ""
}

// variantOf reads variant=NAME from a fenced code block's info-string
// attributes.
func variantOf(attrs string) string {
	for _, f := range strings.Fields(attrs) {
		if v, ok := strings.CutPrefix(f, "variant="); ok {
			return v
		}
	}
	return ""
}
