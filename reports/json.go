package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// JSONSchemaVersion versions the shape JSON writes. It changes whenever a
// key is renamed, removed or redefined.
const JSONSchemaVersion = 1

// jsonReport is the document JSON writes. Objects keep this field order;
// facts are written with sorted keys.
type jsonReport struct {
	SchemaVersion       int              `json:"schema_version"`
	ResultSchemaVersion int              `json:"result_schema_version"`
	FactsSchemaVersion  int              `json:"facts_schema_version"`
	Stepdoctor          aboutJSON        `json:"stepdoctor"`
	Traces              []jsonTrace      `json:"traces"`
	Skipped             []engine.Skipped `json:"skipped"`
	Notes               []string         `json:"notes"`
	RuleErrors          []jsonRuleError  `json:"rule_errors"`
	// Baseline is the --baseline comparison; absent without one.
	Baseline *engine.Baseline `json:"baseline,omitempty"`
}

// jsonRuleError is one rule that failed on one trace (engine.RuleError).
type jsonRuleError struct {
	Trace   string `json:"trace"`
	Rule    string `json:"rule"`
	Source  string `json:"source"`
	Message string `json:"message"`
}

type jsonTrace struct {
	Input        jsonInput          `json:"input"`
	Rank         *int64             `json:"rank"`
	RankSource   string             `json:"rank_source"`
	Verdict      string             `json:"verdict"`
	Facts        json.RawMessage    `json:"facts"`
	Findings     []jsonFinding      `json:"findings"`
	NotEvaluated []jsonNotEvaluated `json:"not_evaluated"`
	Health       jsonHealth         `json:"health"`
}

type jsonInput struct {
	Path       string `json:"path"`
	Bytes      int64  `json:"bytes"`
	Compressed bool   `json:"compressed"`
}

type jsonFinding struct {
	Rank       int            `json:"rank"`
	Rule       string         `json:"rule"`
	Title      string         `json:"title"`
	Severity   string         `json:"severity"`
	Category   string         `json:"category"`
	Impact     jsonFloat      `json:"impact"`
	Confidence string         `json:"confidence"`
	Message    string         `json:"message"`
	Evidence   []jsonEvidence `json:"evidence"`
	Examples   []jsonEvent    `json:"examples"`
	Doc        string         `json:"doc"`
	References []string       `json:"references"`
}

type jsonEvidence struct {
	Name  string    `json:"name"`
	Value jsonFloat `json:"value"`
	Unit  string    `json:"unit"`
}

type jsonEvent struct {
	Name     string    `json:"name"`
	TSUS     jsonFloat `json:"ts_us"`
	OffsetUS jsonFloat `json:"offset_us"`
	DurUS    jsonFloat `json:"dur_us"`
	PID      string    `json:"pid"`
	TID      string    `json:"tid"`
}

type jsonNotEvaluated struct {
	Rule    string   `json:"rule"`
	Title   string   `json:"title"`
	Missing []string `json:"missing"`
	Hint    string   `json:"hint"`
}

type jsonHealth struct {
	EventsRead    int              `json:"events_read"`
	EventsKept    int              `json:"events_kept"`
	EventsDropped int              `json:"events_dropped"`
	Repaired      bool             `json:"repaired"`
	Diagnostics   []jsonDiagnostic `json:"diagnostics"`
}

type jsonDiagnostic struct {
	Kind    string `json:"kind"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Offset  int64  `json:"offset"` // byte offset in the uncompressed JSON, -1 when none
	Count   int    `json:"count"`
}

// jsonFloat is a float64 that encodes NaN and ±Inf as null (JSON has no
// such numbers) and everything else as encoding/json does (shortest
// round-trip digits, plain decimal notation unless tiny or huge).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	// Same form as encoding/json: plain decimals unless tiny or huge.
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, x, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// JSON writes r as an indented, versioned JSON document:
//
//	{"schema_version": 1, "result_schema_version": N, "facts_schema_version": N,
//	 "stepdoctor": {"version", "command", "rule_pack", "rule_dirs", "config"},
//	 "traces": [{"input", "verdict", "facts", "findings", "not_evaluated", "health"}],
//	 "skipped": [...], "notes": [...], "rule_errors": [{"trace", "rule", "source", "message"}]}
//
// facts has every fact with sorted keys (null when not measured; _us in
// microseconds, _ratio in 0..1) plus examples; findings are ranked (rank 1
// first) with evidence {name, value, unit} and example events (ts_us,
// offset_us, dur_us in microseconds); health carries events read, kept and
// dropped, repaired, and every diagnostic with kind, reason, message, byte
// offset (-1 when none) and count. rule_errors lists the rules that failed
// on a trace (their findings are missing), apart from trace health. Lists
// are never null. Non-finite numbers
// are written as null.
func JSON(w io.Writer, r *engine.Result) error {
	if r == nil {
		return fmt.Errorf("render json: %w", errNilResult)
	}
	doc := jsonReport{
		SchemaVersion:       JSONSchemaVersion,
		ResultSchemaVersion: r.SchemaVersion,
		FactsSchemaVersion:  facts.SchemaVersion,
		Stepdoctor:          buildAbout(r.About).json(),
		Traces:              []jsonTrace{},
		Skipped:             append([]engine.Skipped{}, r.Skipped...),
		Notes:               append([]string{}, r.Notes...),
		RuleErrors:          []jsonRuleError{},
		Baseline:            r.Baseline,
	}
	for _, e := range ruleErrorViews(r) {
		doc.RuleErrors = append(doc.RuleErrors, jsonRuleError{Trace: e.Trace, Rule: e.Rule, Source: e.Source, Message: e.Message})
	}
	for _, tr := range r.Traces {
		if tr == nil {
			continue
		}
		jt, err := buildJSONTrace(tr)
		if err != nil {
			return fmt.Errorf("render json: %w", err)
		}
		doc.Traces = append(doc.Traces, jt)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func buildJSONTrace(tr *engine.TraceResult) (jsonTrace, error) {
	jt := jsonTrace{
		Input:        jsonInput{Path: tr.Input.Path, Bytes: tr.Input.Bytes, Compressed: tr.Input.Compressed},
		Rank:         tr.Rank,
		RankSource:   tr.RankSource,
		Findings:     []jsonFinding{},
		NotEvaluated: []jsonNotEvaluated{},
		Health: jsonHealth{
			EventsRead:    tr.Health.EventsRead,
			EventsKept:    tr.Health.EventsKept,
			EventsDropped: tr.Health.Dropped,
			Repaired:      tr.Health.Repaired,
			Diagnostics:   []jsonDiagnostic{},
		},
	}
	if tr.Facts == nil {
		jt.Verdict = noFactsVerdict
		jt.Facts = json.RawMessage("null")
	} else {
		jt.Verdict = verdict(tr.Facts)
		raw, err := json.Marshal(toJSONValue(reflect.ValueOf(tr.Facts)))
		if err != nil {
			return jt, fmt.Errorf("encode facts: %w", err)
		}
		jt.Facts = raw
	}
	for i, f := range tr.Findings {
		jf := jsonFinding{
			Rank:       i + 1,
			Rule:       f.Rule,
			Title:      f.Title,
			Severity:   string(f.Severity),
			Category:   f.Category,
			Impact:     jsonFloat(f.Impact),
			Confidence: string(f.Confidence),
			Message:    f.Message,
			Evidence:   []jsonEvidence{},
			Examples:   []jsonEvent{},
			Doc:        f.Doc,
			References: nonNil(f.References),
		}
		for _, e := range f.Evidence {
			jf.Evidence = append(jf.Evidence, jsonEvidence{Name: e.Name, Value: jsonFloat(e.Value), Unit: e.Unit})
		}
		for _, ex := range f.Examples {
			jf.Examples = append(jf.Examples, jsonEvent{
				Name: ex.Name, TSUS: jsonFloat(ex.TSUS), OffsetUS: jsonFloat(ex.OffsetUS),
				DurUS: jsonFloat(ex.DurUS), PID: ex.PID, TID: ex.TID,
			})
		}
		jt.Findings = append(jt.Findings, jf)
	}
	for _, ne := range tr.NotEvaluated {
		jt.NotEvaluated = append(jt.NotEvaluated, jsonNotEvaluated{
			Rule: ne.Rule, Title: ne.Title, Missing: nonNil(ne.Missing), Hint: ne.Hint,
		})
	}
	for _, d := range tr.Health.Diagnostics {
		jt.Health.Diagnostics = append(jt.Health.Diagnostics, jsonDiagnostic{
			Kind: string(d.Kind), Reason: d.Reason, Message: d.Message, Offset: d.Offset, Count: d.Count,
		})
	}
	return jt, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// toJSONValue converts a facts value into maps, slices and scalars keyed by
// json tag, so encoding/json writes object keys sorted and non-finite floats
// as null. Nil pointers become null; nil slices and maps become empty.
func toJSONValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return toJSONValue(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name := jsonName(sf)
			if name == "" {
				continue
			}
			fv := v.Field(i)
			if hasOmitEmpty(sf) && fv.IsZero() {
				continue
			}
			m[name] = toJSONValue(fv)
		}
		return m
	case reflect.Map:
		m := map[string]any{}
		iter := v.MapRange()
		for iter.Next() {
			m[fmt.Sprint(iter.Key().Interface())] = toJSONValue(iter.Value())
		}
		return m
	case reflect.Slice, reflect.Array:
		s := make([]any, v.Len())
		for i := range s {
			s[i] = toJSONValue(v.Index(i))
		}
		return s
	case reflect.Float32, reflect.Float64:
		return jsonFloat(v.Float())
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint()
	case reflect.String:
		return v.String()
	}
	return nil
}

func hasOmitEmpty(sf reflect.StructField) bool {
	_, opts, _ := cutTag(sf.Tag.Get("json"))
	for opts != "" {
		var o string
		o, opts, _ = cutTag(opts)
		if o == "omitempty" || o == "omitzero" {
			return true
		}
	}
	return false
}

func cutTag(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
