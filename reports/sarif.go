package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/version"
	"github.com/stepdoctor/stepdoctor/rules"
)

// SARIF 2.1.0 (OASIS, https://docs.oasis-open.org/sarif/sarif/v2.1.0/)
// for `stepdoctor lint`: one run whose tool.driver.rules lists every script
// rule evaluated (id, title, Markdown doc as help, first reference as
// helpUri, severity as defaultConfiguration.level and properties), and one
// result per finding with a physical location: the artifact URI relative to
// the repository root (uriBaseId %SRCROOT%) and a region whose columns
// count Unicode code points (run.columnKind). Severities map to levels:
// high -> error, medium -> warning, low and info -> note. Findings silenced
// by `# stepdoctor: ignore[...]` are results with an inSource suppression
// whose justification is the comment's reason. Each result carries
// partialFingerprints["stepdoctor/v1"]: SHA-256 (hex, first 32 digits) of
// rule id, relative path, the whitespace-normalised source line and the
// occurrence number of that triple, so a finding keeps its fingerprint when
// lines are inserted above it. Syntax errors are warning notifications in
// the run's invocation. Output is deterministic (no time, no absolute
// paths).
//
// Every string from a script, trace or team rule is escaped (see
// sarifRuleFor): plain-text messages (results' message.text, rules'
// shortDescription, fullDescription and help.text, notifications) by
// SARIFText and SARIFDocText, which remove control and bidi characters,
// break mentions and escape literal '[' and ']' as SARIF 2.1.0 §3.11.6
// requires; help.markdown by MarkdownDoc, as the Markdown report shows the
// doc; snippets, suppression justifications, rule ids and property
// values lose control and bidi characters; helpUri is the first reference
// only when it is an http(s) URL, percent-encoded where a URI may not hold
// a character.

// SARIFSchemaURI is the $schema written into SARIF output.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// SARIFFingerprintKey names stepdoctor's entry in partialFingerprints.
const SARIFFingerprintKey = "stepdoctor/v1"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                `json:"tool"`
	Invocations        []sarifInvocation        `json:"invocations"`
	OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds"`
	ColumnKind         string                   `json:"columnKind"`
	Results            []sarifResult            `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string         `json:"name"`
	Version         string         `json:"version"`
	SemanticVersion string         `json:"semanticVersion"`
	InformationURI  string         `json:"informationUri"`
	Rules           []sarifRule    `json:"rules"`
	Properties      map[string]any `json:"properties,omitempty"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	CommandLine         string              `json:"commandLine,omitempty"`
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Descriptor *sarifDescriptorRef `json:"descriptor,omitempty"`
	Level      string              `json:"level"`
	Message    sarifText           `json:"message"`
	Locations  []sarifLocation     `json:"locations"`
	Properties map[string]any      `json:"properties,omitempty"`
}

// sarifDescriptorRef names the kind of a notification ("syntax-error",
// "missing", "skipped-file").
type sarifDescriptorRef struct {
	ID string `json:"id"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	RelatedLocations    []sarifLocation    `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]any     `json:"properties"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifLocation struct {
	ID               *int          `json:"id,omitempty"`
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
	Message          *sarifText    `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI         string     `json:"uri,omitempty"`
	URIBaseID   string     `json:"uriBaseId,omitempty"`
	Description *sarifText `json:"description,omitempty"`
}

type sarifRegion struct {
	StartLine   int           `json:"startLine"`
	StartColumn int           `json:"startColumn,omitempty"`
	EndLine     int           `json:"endLine,omitempty"`
	EndColumn   int           `json:"endColumn,omitempty"`
	Snippet     *sarifSnippet `json:"snippet,omitempty"`
}

type sarifSnippet struct {
	Text string `json:"text"`
}

// sarifLevel maps a severity to a SARIF result level.
func sarifLevel(s rules.Severity) string {
	switch s {
	case rules.SeverityHigh:
		return "error"
	case rules.SeverityMedium:
		return "warning"
	}
	return "note"
}

// sarifRuleName turns a kebab-case id into the PascalCase name SARIF
// viewers show ("host-sync-in-loop" -> "HostSyncInLoop").
func sarifRuleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// SARIF writes r as a SARIF 2.1.0 log (see the package comment above).
func SARIF(w io.Writer, r *engine.LintResult) error {
	if r == nil {
		return fmt.Errorf("render sarif: %w", errNilResult)
	}
	run := newSARIFRun(r.About)
	index := map[string]int{}
	for _, rl := range r.Rules {
		index[rl.ID] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules,
			sarifRuleFor(rl.ID, rl.Title, rl.Doc, rl.Category, rl.Severity, rl.References))
	}
	for _, s := range r.Scripts {
		if s == nil {
			continue
		}
		seen := map[string]int{}
		add := func(f rules.Finding, sup *engine.Suppressed) error {
			idx, ok := index[f.Rule]
			if !ok {
				return fmt.Errorf("render sarif: finding of rule %s in %s: the rule is not in the result's rules", f.Rule, s.Path)
			}
			res := sarifResult{
				RuleID: clean(f.Rule), RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifText{Text: SARIFText(f.Message)},
				Locations: []sarifLocation{}, PartialFingerprints: map[string]string{},
				Properties: sarifProps(map[string]any{"impact": f.Impact, "confidence": string(f.Confidence), "severity": string(f.Severity), "category": f.Category}),
			}
			line := ""
			if f.Location != nil {
				res.Locations = append(res.Locations, sarifLoc(r.Root, s, f.Location))
				if s.Facts != nil {
					line = strings.Join(strings.Fields(s.Facts.LineText(f.Location.Line)), " ")
				}
			}
			key := f.Rule + "\x00" + s.RelPath + "\x00" + line
			n := seen[key]
			seen[key]++
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", key, n)))
			res.PartialFingerprints[SARIFFingerprintKey] = hex.EncodeToString(sum[:16])
			if sup != nil {
				res.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: clean(sup.Reason)}}
			}
			run.Results = append(run.Results, res)
			return nil
		}
		for _, f := range s.Findings {
			if err := add(f, nil); err != nil {
				return err
			}
		}
		for i := range s.Suppressed {
			if err := add(s.Suppressed[i].Finding, &s.Suppressed[i]); err != nil {
				return err
			}
		}
		for _, e := range s.RuleErrors {
			run.Invocations[0].ExecutionSuccessful = false
			run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{
				Descriptor: &sarifDescriptorRef{ID: "rule-failed"},
				Level:      "error", Message: sarifText{Text: SARIFText(s.RelPath + ": " + e + " (findings of this rule may be missing)")},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifact{URI: sarifURI(s.RelPath), URIBaseID: "%SRCROOT%"},
				}}},
			})
		}
		for _, d := range s.Diagnostics {
			run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{
				Descriptor: &sarifDescriptorRef{ID: clean(d.Kind)},
				Level:      "error", Message: sarifText{Text: SARIFText(s.RelPath + ": " + d.Message + " (the rest of the file was checked)")},
				Locations:  []sarifLocation{sarifLoc(r.Root, s, &rules.Location{Line: d.Line, Column: d.Column, EndLine: d.EndLine, EndColumn: d.EndColumn})},
				Properties: sarifProps(map[string]any{"node": d.Node, "near": d.Near, "partial": true}),
			})
		}
	}
	for _, sk := range r.Skipped {
		run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{
			Descriptor: &sarifDescriptorRef{ID: "skipped-file"},
			Level:      "note", Message: sarifText{Text: SARIFText("skipped " + sk.RelPath + ": " + sk.Reason)},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifactFor(r.Root, sk.Path),
			}}},
		})
	}
	return writeSARIF(w, run)
}

// newSARIFRun is an empty run: the driver (name, version, semantic
// version, information URI, the rule pack as properties), one successful invocation with the command
// line, and %SRCROOT% described for viewers that map it themselves (code
// scanning sets it to the repository checkout).
func newSARIFRun(a *engine.About) sarifRun {
	about := buildAbout(a)
	var props map[string]any
	if about.RulePack != "" || len(about.RuleDirs) > 0 || about.Config != "" {
		props = map[string]any{"rulePack": about.RulePack, "ruleDirs": nonNil(about.RuleDirs), "config": about.Config}
	}
	return sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "stepdoctor", Version: about.Version, SemanticVersion: version.Semantic(about.Version),
			InformationURI: InformationURI, Rules: []sarifRule{}, Properties: props,
		}},
		OriginalURIBaseIDs: map[string]sarifArtifact{
			sarifSrcRoot: {Description: &sarifText{Text: "The directory relative URIs start from: the repository root (the nearest directory holding .git) where stepdoctor ran, else its working directory."}},
		},
		ColumnKind:  "unicodeCodePoints",
		Results:     []sarifResult{},
		Invocations: []sarifInvocation{{CommandLine: about.Command, ExecutionSuccessful: true, Notifications: []sarifNotification{}}},
	}
}

// writeSARIF writes a log of one run, indented, HTML characters as is.
func writeSARIF(w io.Writer, run sarifRun) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}}); err != nil {
		return fmt.Errorf("encode sarif: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write sarif: %w", err)
	}
	return nil
}

// sarifSrcRoot is the uriBaseId of every relative URI.
const sarifSrcRoot = "%SRCROOT%"

// sarifArtifactFor locates path: relative to root (uriBaseId %SRCROOT%)
// when it lies inside root, else an absolute file: URI, which code
// scanning and editors can open as is. With root "" a relative path that
// does not climb out ("..") is taken as relative to %SRCROOT% unchanged, so
// output does not depend on the working directory.
func sarifArtifactFor(root, path string) sarifArtifact {
	if path == "" || path == "-" {
		return sarifArtifact{URI: "stdin", URIBaseID: sarifSrcRoot}
	}
	// An object-storage URL (s3://bucket/key) is already an absolute URI.
	if i := strings.Index(path, "://"); i > 0 && !strings.ContainsAny(path[:i], `/\.`) {
		return sarifArtifact{URI: sarifURIRef(path)}
	}
	clean := filepath.Clean(path)
	if root != "" {
		if abs, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(root, abs); err == nil && !climbs(rel) {
				return sarifArtifact{URI: sarifURI(filepath.ToSlash(rel)), URIBaseID: sarifSrcRoot}
			}
			clean = abs
		}
	} else if !filepath.IsAbs(clean) && !climbs(clean) {
		return sarifArtifact{URI: sarifURI(filepath.ToSlash(clean)), URIBaseID: sarifSrcRoot}
	} else if abs, err := filepath.Abs(path); err == nil {
		clean = abs
	}
	p := filepath.ToSlash(clean)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x -> /C:/x
	}
	return sarifArtifact{URI: "file://" + strings.ReplaceAll(sarifURI(p), "%3A", ":")}
}

func climbs(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || strings.HasPrefix(rel, "../")
}

func sarifLoc(root string, s *engine.ScriptResult, l *rules.Location) sarifLocation {
	reg := sarifRegion{StartLine: max(l.Line, 1), StartColumn: l.Column}
	if l.EndLine >= reg.StartLine {
		reg.EndLine = l.EndLine
		if l.EndColumn > 0 && (l.EndLine > reg.StartLine || l.EndColumn >= l.Column) {
			reg.EndColumn = l.EndColumn
		}
	}
	if s.Facts != nil {
		if t := s.Facts.LineText(reg.StartLine); t != "" {
			reg.Snippet = &sarifSnippet{Text: cleanDoc(t)}
		}
	}
	return sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: sarifArtifactFor(root, s.Path),
		Region:           &reg,
	}}
}

// sarifURI percent-encodes a slash-separated relative path for a URI
// reference (spaces and other reserved characters; slashes kept).
func sarifURI(p string) string {
	var b strings.Builder
	for _, c := range []byte(p) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~/", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sarifRuleFor is a rule's reportingDescriptor, every string escaped: the
// title as shortDescription and the doc's first paragraph as
// fullDescription (SARIFText), the doc as help.text (SARIFDocText) and as
// help.markdown (MarkdownDoc: raw HTML as text, images as links, unsafe
// link schemes defused, mentions broken), the first reference as helpUri
// when it is a web URL (sarifHelpURI). A rule without a doc has its title
// as description and help. Ids and properties lose control characters.
func sarifRuleFor(id, title, doc, category string, sev rules.Severity, refs []string) sarifRule {
	sr := sarifRule{
		ID: clean(id), Name: clean(sarifRuleName(id)),
		ShortDescription:     sarifText{Text: SARIFText(title)},
		FullDescription:      sarifText{Text: SARIFText(firstParagraph(doc))},
		Help:                 sarifText{Text: SARIFDocText(doc), Markdown: MarkdownDoc(doc)},
		DefaultConfiguration: sarifConfig{Level: sarifLevel(sev)},
		Properties: sarifProps(map[string]any{
			"category": category, "severity": string(sev),
			"tags": []string{"performance", "pytorch", category}, "references": nonNil(refs),
		}),
	}
	if strings.TrimSpace(sr.FullDescription.Text) == "" {
		sr.FullDescription.Text = sr.ShortDescription.Text
	}
	if strings.TrimSpace(sr.Help.Text) == "" {
		sr.Help = sarifText{Text: sr.ShortDescription.Text, Markdown: mdText(title)}
	}
	if len(refs) > 0 {
		sr.HelpURI = sarifHelpURI(refs[0])
	}
	return sr
}

// sarifProps removes control and bidi characters (clean) from the string
// values of a property bag, and from the strings of its string lists
// (tags, references); other values are kept.
func sarifProps(m map[string]any) map[string]any {
	for k, v := range m {
		switch v := v.(type) {
		case string:
			m[k] = clean(v)
		case []string:
			out := make([]string, len(v))
			for i, s := range v {
				out[i] = clean(s)
			}
			m[k] = out
		}
	}
	return m
}

// sarifHelpURI is ref as a helpUri: an http or https URL, control
// characters removed and any byte a URI may not hold (space, '<', '>',
// '"', non-ASCII) percent-encoded; "" (no helpUri) for anything else, such
// as a javascript: or data: reference.
func sarifHelpURI(ref string) string {
	ref = strings.TrimSpace(clean(ref))
	if !isWebURL(ref) {
		return ""
	}
	return sarifURIRef(ref)
}

// sarifURIRef percent-encodes the bytes of an absolute URI that RFC 3986
// does not allow anywhere in one (controls, space, '"', '<', '>', '\',
// '^', '`', '{', '|', '}', non-ASCII, and '%' not starting an escape),
// keeping reserved characters and existing escapes.
func sarifURIRef(u string) string {
	var b strings.Builder
	for i, c := range []byte(u) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 || c == '%' && !pctEscapeAt(u, i) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pctEscapeAt reports whether u[i:] starts with a percent escape ("%3C").
func pctEscapeAt(u string, i int) bool {
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	return i+2 < len(u) && isHex(u[i+1]) && isHex(u[i+2])
}

// firstParagraph is the doc's first paragraph, Markdown emphasis markers
// removed, for SARIF's plain-text fullDescription.
func firstParagraph(doc string) string {
	p, _, _ := strings.Cut(strings.TrimSpace(doc), "\n\n")
	p = strings.ReplaceAll(p, "**", "")
	return strings.Join(strings.Fields(p), " ")
}
