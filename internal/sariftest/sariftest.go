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
package sariftest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
