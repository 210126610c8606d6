package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/rules"
)

// AnalyzeSARIF writes the trace findings of `stepdoctor analyze` as a
// SARIF 2.1.0 log, for code scanning. The run is shaped as lint's (see
// SARIF): tool.driver names the version and lists, once, every rule that
// found something (id, PascalCase name, title as shortDescription, the
// doc's first paragraph and the whole doc as help text and Markdown, the
// first reference as helpUri, properties severity and category); each
// finding of each trace is one result, its level from its severity, its
// message the finding's, its properties the trace, rank, impact,
// confidence, severity and category.
//
// Trace, script and rule strings are escaped as in SARIF: messages,
// descriptions and help.text by SARIFText and SARIFDocText (control and
// bidi characters removed, mentions broken, literal '[' and ']' escaped as
// SARIF 2.1.0 §3.11.6 requires, so a kernel name cannot form an embedded
// link), help.markdown by MarkdownDoc, helpUri only for http(s) URLs.
//
// A result's location is the source line when one is known: the script
// line of a finding joined with --script (rules.Finding.Location), else the
// Python function a with_stack trace names in the message (Kineto's
// "file(line): function"; line is the function's first line). The trace
// file is then a related location; without a source line the trace file
// is the location. URIs are relative to %SRCROOT% (the repository root or
// working directory of the run, engine.About.SourceRoot) when the file lies
// inside it, else absolute file: URIs. partialFingerprints hold a SHA-256
// of rule, rank, location and the occurrence number, so reruns keep their
// alerts. Output is deterministic.
func AnalyzeSARIF(w io.Writer, r *engine.Result) error {
	if r == nil {
		return fmt.Errorf("render sarif: %w", errNilResult)
	}
	root := ""
	if r.About != nil {
		root = r.About.SourceRoot
	}
	run := newSARIFRun(r.About)
	index := map[string]int{}
	seen := map[string]int{}
	for _, tr := range r.Traces {
		if tr == nil {
			continue
		}
		traceLoc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactFor(root, tr.Input.Path)}}
		rank := ""
		if tr.Rank != nil {
			rank = strconv.FormatInt(*tr.Rank, 10)
		}
		for _, f := range tr.Findings {
			idx, ok := index[f.Rule]
			if !ok {
				idx = len(run.Tool.Driver.Rules)
				index[f.Rule] = idx
				run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleOf(f))
			}
			props := map[string]any{
				"trace": tr.Input.Path, "impact": f.Impact, "confidence": string(f.Confidence),
				"severity": string(f.Severity), "category": f.Category,
			}
			if tr.Rank != nil {
				props["rank"] = *tr.Rank
			}
			res := sarifResult{
				RuleID: clean(f.Rule), RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifText{Text: SARIFText(f.Message)},
				PartialFingerprints: map[string]string{}, Properties: sarifProps(props),
			}
			where := ""
			if src, ok := findingSource(f); ok {
				loc := sarifLocation{PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifactFor(root, src.File),
					Region:           &sarifRegion{StartLine: max(src.Line, 1), StartColumn: src.Column},
				}}
				res.Locations = []sarifLocation{loc}
				id := 1
				rel := traceLoc
				rel.ID, rel.Message = &id, &sarifText{Text: "the trace that measured it"}
				res.RelatedLocations = []sarifLocation{rel}
				where = loc.PhysicalLocation.ArtifactLocation.URI + ":" + strconv.Itoa(src.Line)
			} else {
				res.Locations = []sarifLocation{traceLoc}
				where = traceLoc.PhysicalLocation.ArtifactLocation.URI
			}
			key := f.Rule + "\x00" + rank + "\x00" + where
			n := seen[key]
			seen[key]++
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", key, n)))
			res.PartialFingerprints[SARIFFingerprintKey] = hex.EncodeToString(sum[:16])
			run.Results = append(run.Results, res)
		}
	}
	// A rule that failed or timed out is a tool execution notification on
	// the trace it failed on: its findings may be missing.
	for _, e := range r.RuleErrors {
		run.Invocations[0].ExecutionSuccessful = false
		msg := SARIFText(e.String() + " (findings of this rule may be missing)")
		run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{
			Descriptor: &sarifDescriptorRef{ID: "rule-failed"},
			Level:      "error", Message: sarifText{Text: msg},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactFor(root, e.Trace)}}},
		})
	}
	return writeSARIF(w, run)
}

// sarifRuleOf describes a finding's rule from what the finding carries,
// every string escaped (see sarifRuleFor).
func sarifRuleOf(f rules.Finding) sarifRule {
	return sarifRuleFor(f.Rule, f.Title, f.Doc, f.Category, f.Severity, f.References)
}

// pyFrameInMessage finds a Python frame as Kineto names it, "file(line):
// function", in a finding's message (culprit sites of with_stack traces),
// or the "inside f() at file:line" of a joined script finding.
var (
	pyFrameInMessage = regexp.MustCompile(`([^\s()'"]+\.py)\((\d+)\): `)
	pyAtInMessage    = regexp.MustCompile(`\(\) at ([^\s()'"]+\.py):(\d+)`)
)

// findingSource is the source line a finding points at: its Location (a
// script finding, or a trace finding joined to one), else the first Python
// frame its message names.
func findingSource(f rules.Finding) (rules.Location, bool) {
	if f.Location != nil && f.Location.File != "" {
		return *f.Location, true
	}
	for _, re := range []*regexp.Regexp{pyFrameInMessage, pyAtInMessage} {
		if m := re.FindStringSubmatch(f.Message); m != nil {
			line, err := strconv.Atoi(m[2])
			if err == nil && line > 0 {
				return rules.Location{File: m[1], Line: line}, true
			}
		}
	}
	return rules.Location{}, false
}
