package script

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDumpDebug(t *testing.T) {
	p := os.Getenv("DUMP")
	if p == "" {
		t.Skip()
	}
	f, err := ScanFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(f, "", " ")
	os.WriteFile("/tmp/dump/out.json", b, 0o644)
}
