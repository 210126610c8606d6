package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// TestFactsFileRangeChecked: a facts line with a ratio outside 0..1, a
// negative count or an absurd number is refused naming the file, line and
// fact; the line as written loads.
func TestFactsFileRangeChecked(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.json")
	if err := os.WriteFile(p, tracetest.DataloaderBound().JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(context.Background(), Options{Paths: []string{p}, FactsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	line, err := FactsLine(res.Traces[0])
	if err != nil {
		t.Fatal(err)
	}
	good := string(line)
	write := func(body string) string {
		f := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(f, []byte("\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if _, err := readFactsFile(context.Background(), nil, write(good), nil); err != nil {
		t.Fatalf("facts as written: %v", err)
	}
	set := func(key, val string) string {
		i := strings.Index(good, `"`+key+`":`)
		if i < 0 {
			t.Fatalf("no %s in %s", key, good)
		}
		j := i + len(key) + 3
		k := j + strings.IndexAny(good[j:], ",}")
		return good[:j] + val + good[k:]
	}
	for _, tt := range []struct{ key, val, want string }{
		{"gpu_idle_ratio", "5", "fact gpu_idle_ratio is 5, outside 0..1"},
		{"dataloader_time_ratio", "-0.5", "fact dataloader_time_ratio is -0.5, below 0"},
		{"steps_count", "-5", "fact steps_count is -5, below 0"},
		{"steps_count", "100000", "steps_count 100000, but 5 steps listed"},
		{"window_us", "1e999", "window_us"},
	} {
		f := write(set(tt.key, tt.val))
		_, err := readFactsFile(context.Background(), nil, f, nil)
		if err == nil || !strings.Contains(err.Error(), "read facts file "+f+" line 2") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s = %s: got %v, want an error naming the file, line 2 and %q", tt.key, tt.val, err, tt.want)
		}
	}
	// A line over MaxFactsLine is refused before it is decoded.
	long := write(set("file", `"`+strings.Repeat("x", MaxFactsLine)+`"`))
	if _, err := readFactsFile(context.Background(), nil, long, nil); err == nil || !strings.Contains(err.Error(), "a line over 16 MiB") {
		t.Errorf("a 16 MiB line: %v", err)
	}
	// Rounding slack and the facts allowed past 1 or below 0 load.
	for _, kv := range [][2]string{{"gpu_idle_ratio", "1.0000000001"}, {"step_time_cv", "1.7"}} {
		if _, err := readFactsFile(context.Background(), nil, write(set(kv[0], kv[1])), nil); err != nil {
			t.Errorf("%s = %s: %v", kv[0], kv[1], err)
		}
	}
}
