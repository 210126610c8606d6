package facts_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// TestCatalogueMatchesFacts keeps the catalogue and the Facts fields that
// rules see (json and expr tags, not "-") equal, in the same order.
func TestCatalogueMatchesFacts(t *testing.T) {
	var fields []string
	typ := reflect.TypeOf(facts.Facts{})
	for i := 0; i < typ.NumField(); i++ {
		sf := typ.Field(i)
		if sf.Tag.Get("expr") == "-" {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name != sf.Tag.Get("expr") {
			t.Errorf("field %s: json %q and expr %q differ", sf.Name, name, sf.Tag.Get("expr"))
		}
		fields = append(fields, name)
	}
	var cat []string
	units := map[string]bool{"us": true, "bytes": true, "ratio": true, "count": true, "per_step": true, "per_ms": true, "bool": true, "id": true, "object": true, "stats_us": true, "bytes_per_step": true}
	for _, d := range facts.Catalogue {
		cat = append(cat, d.Name)
		if !units[d.Unit] || d.Definition == "" || d.Source == "" {
			t.Errorf("catalogue %s: unit %q, definition and source are required", d.Name, d.Unit)
		}
		for suf, unit := range map[string]string{"_ratio": "ratio", "_count": "count", "_per_ms": "per_ms", "_bytes": "bytes", "_bytes_per_step": "bytes_per_step", "_us": "us"} {
			if strings.HasSuffix(d.Name, suf) && d.Unit != unit && !strings.HasSuffix(d.Name, "_bytes_per_step") && d.Unit != "stats_us" {
				t.Errorf("catalogue %s: unit %s does not match the name", d.Name, d.Unit)
			}
		}
	}
	if strings.Join(fields, ",") != strings.Join(cat, ",") {
		t.Errorf("catalogue and Facts differ:\nfacts:     %v\ncatalogue: %v", fields, cat)
	}
}

// TestCatalogueDoc keeps docs/FACTS.md equal to facts.CatalogueMarkdown();
// -update rewrites it.
func TestCatalogueDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "FACTS.md")
	var buf bytes.Buffer
	facts.CatalogueMarkdown(&buf)
	if *updateFlag {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s is stale: run go test ./engine/facts -update", path)
	}
}
