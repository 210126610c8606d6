// Package sariftest validates SARIF documents in tests against the SARIF
// 2.1.0 JSON schemas: the project's own subset schema
// (reports/testdata/sarif-2.1.0-subset.schema.json, draft-07, stricter where
// stepdoctor promises more than SARIF requires) and, when the environment
// names it, the official OASIS schema (sarif-2.1.0-rtm.5.json, draft-04).
//
// The official schema is not vendored into the repository: .ci/run fetches
// it from the npm registry (the @microsoft/jest-sarif package ships it),
// checks its SHA-256 and exports its path as STEPDOCTOR_SARIF_SCHEMA. Where
// that variable is unset the tests validate against the subset only and say
// so once; where it is set but the file is missing or does not compile, the
// tests fail, so CI cannot pass without the official check.
//
// Inert checks what schemas cannot: that hostile text stays text in a log
// (escaped brackets in plain-text messages, SARIF 2.1.0 §3.11.6; no control
// or bidi characters; web helpUris only).
package sariftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvOfficial names the environment variable that holds the path of the
// official SARIF 2.1.0 schema.
const EnvOfficial = "STEPDOCTOR_SARIF_SCHEMA"

// OfficialSHA256 is the SHA-256 of sarif-2.1.0-rtm.5.json as shipped in
// @microsoft/jest-sarif 1.0.0-beta.0 (lib/schemas/). .ci/run checks it.
const OfficialSHA256 = "2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8"

// Schema is one compiled SARIF schema and the name tests print.
type Schema struct {
	Name   string
	schema *jsonschema.Schema
}

var (
	once    sync.Once
	schemas []Schema
	loadErr error
	said    sync.Once
)

// subsetPath is the project's subset schema, found from this source file so
// that every package's tests share it.
func subsetPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "reports", "testdata", "sarif-2.1.0-subset.schema.json")
}

func compile(name, path string) (Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return Schema{}, fmt.Errorf("open schema %s: %w", name, err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return Schema{}, fmt.Errorf("decode schema %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "file:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return Schema{}, fmt.Errorf("add schema %s: %w", path, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return Schema{}, fmt.Errorf("compile schema %s: %w", path, err)
	}
	return Schema{Name: name, schema: s}, nil
}

func load() ([]Schema, error) {
	once.Do(func() {
		sub, err := compile("sarif-2.1.0-subset.schema.json", subsetPath())
		if err != nil {
			loadErr = err
			return
		}
		schemas = []Schema{sub}
		if p := os.Getenv(EnvOfficial); p != "" {
			off, err := compile("sarif-2.1.0-rtm.5.json", p)
			if err != nil {
				loadErr = fmt.Errorf("%s=%s: %w", EnvOfficial, p, err)
				return
			}
			schemas = append(schemas, off)
		}
	})
	return schemas, loadErr
}

// Schemas returns the schemas every SARIF document must pass: the subset,
// then the official schema when EnvOfficial is set.
func Schemas(t testing.TB) []Schema {
	t.Helper()
	s, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 1 {
		said.Do(func() {
			t.Logf("%s is unset: SARIF is checked against the project's subset schema only (.ci/run fetches the official one)", EnvOfficial)
		})
	}
	return s
}

// Validate checks doc against every schema and returns the first failure,
// naming the schema.
func Validate(t testing.TB, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("decode SARIF: %w", err)
	}
	for _, s := range Schemas(t) {
		if err := s.schema.Validate(inst); err != nil {
			return fmt.Errorf("validate against %s: %w", s.Name, err)
		}
	}
	return nil
}

// Rejects reports, per schema, whether it rejects doc (the tests that prove
// the schema check can fail).
func Rejects(t testing.TB, doc []byte) map[string]bool {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range Schemas(t) {
		out[s.Name] = s.schema.Validate(inst) != nil
	}
	return out
}

// Inert walks a SARIF log and lists what text from a trace, script or team
// rule must never become in it, one line per problem; none means inert:
//
//   - in a plain-text message string (the "text" of a message,
//     shortDescription, fullDescription, help or description object), a
//     '[' or ']' not escaped by a backslash: SARIF 2.1.0 §3.11.6 reads
//     "[text](uri)" there as an embedded link;
//   - in any string, keys included, a control character other than newline
//     and tab (C0, DEL, C1), a bidi embedding, override or isolate (U+202A
//     to U+202E, U+2066 to U+2069), or U+2028 / U+2029;
//   - a helpUri that is not an http or https URL, or that holds a space,
//     '<', '>' or '"'.
//
// The Markdown strings (help.markdown and every other "markdown") are
// returned for the caller to parse (internal/mdcheck).
func Inert(doc []byte) (problems, markdown []string, err error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, nil, fmt.Errorf("decode SARIF: %w", err)
	}
	messageKeys := map[string]bool{"message": true, "shortDescription": true, "fullDescription": true, "help": true, "description": true}
	var walk func(path, parent, key string, v any)
	walk = func(path, parent, key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				if cs := controls(k); len(cs) > 0 {
					problems = append(problems, fmt.Sprintf("%s: key %q has control characters %v", path, k, cs))
				}
				walk(path+"."+k, key, k, c)
			}
		case []any:
			for i, c := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), parent, key, c)
			}
		case string:
			if cs := controls(t); len(cs) > 0 {
				problems = append(problems, fmt.Sprintf("%s: control characters %v in %q", path, cs, t))
			}
			switch {
			case key == "text" && messageKeys[parent]:
				if i := unescapedBracket(t); i >= 0 {
					problems = append(problems, fmt.Sprintf("%s: unescaped %q at byte %d of %q", path, t[i], i, t))
				}
			case key == "markdown":
				markdown = append(markdown, t)
			case key == "helpUri":
				l := strings.ToLower(t)
				if !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") || strings.ContainsAny(t, " <>\"") {
					problems = append(problems, fmt.Sprintf("%s: helpUri %q", path, t))
				}
			}
		}
	}
	walk("$", "", "", v)
	return problems, markdown, nil
}

// controls lists the control, bidi and line-separator characters in s
// (newline and tab allowed).
func controls(s string) []string {
	var out []string
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '\u2028', r == '\u2029',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			out = append(out, fmt.Sprintf("%U at byte %d", r, i))
		}
	}
	return out
}

// unescapedBracket is the byte offset of the first '[' or ']' in s that an
// odd number of backslashes does not precede, or -1.
func unescapedBracket(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '[' && s[i] != ']' {
			continue
		}
		n := 0
		for k := i - 1; k >= 0 && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return -1
}
