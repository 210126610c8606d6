package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/rules"

	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")

func TestExpandPaths(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.pt.trace.json.gz", "a.pt.trace.json", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub.json"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub.json", "rank1.json"), []byte("{}"), 0o644)
	got, err := ExpandPaths([]string{dir, "-"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.pt.trace.json"), filepath.Join(dir, "b.pt.trace.json.gz"), filepath.Join(dir, "sub.json", "rank1.json"), "-"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}
	empty := t.TempDir()
	if _, err := ExpandPaths([]string{empty}); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("empty directory: err = %v", err)
	}
	if _, err := ExpandPaths(nil); err == nil {
		t.Error("no paths: want an error")
	}
	if _, err := ExpandPaths([]string{"-", "-"}); err == nil {
		t.Error("stdin twice: want an error")
	}
}

// A directory or URL prefix is read for its traces, else for its facts
// files; a URL's listed objects carry their sizes, which the memory budget
// and progress use as a local file's size on disk.
func TestExpandFactsAndURLs(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644)
	}
	write("facts/rank1.jsonl", 10)
	write("facts/rank0.jsonl", 20)
	write("mixed/rank0.jsonl", 1)
	write("mixed/t/rank0.pt.trace.json.gz", 300)
	store := &objstore.Store{}
	defer store.Close()
	url := "file://" + filepath.ToSlash(dir)
	for _, c := range []struct {
		path string
		want []inputFile
	}{
		{filepath.Join(dir, "facts"), []inputFile{{filepath.Join(dir, "facts", "rank0.jsonl"), 20, true}, {filepath.Join(dir, "facts", "rank1.jsonl"), 10, true}}},
		{filepath.Join(dir, "mixed"), []inputFile{{filepath.Join(dir, "mixed", "t", "rank0.pt.trace.json.gz"), 300, true}}},
		{url + "/facts/", []inputFile{{url + "/facts/rank0.jsonl", 20, true}, {url + "/facts/rank1.jsonl", 10, true}}},
		{url + "/mixed", []inputFile{{url + "/mixed/t/rank0.pt.trace.json.gz", 300, true}}},
		{url + "/facts/rank1.jsonl", []inputFile{{url + "/facts/rank1.jsonl", 10, false}}},
	} {
		got, _, err := expand(context.Background(), store, []string{c.path})
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.path, got, c.want)
		}
	}
	gz := inputFile{url + "/mixed/t/rank0.pt.trace.json.gz", 300, true}
	if got, want := estimateMemory(gz), int64(300*gzipInflation*memPerJSONByte)+64<<20; got != want {
		t.Errorf("memory estimate of a 300-byte .gz object: %d, want %d", got, want)
	}
	if _, _, err := expand(context.Background(), store, []string{url + "/none/"}); err == nil || !strings.Contains(err.Error(), url+"/none/") {
		t.Errorf("empty prefix: err = %v, want one naming the URL", err)
	}
}

// Analyze keeps input order when files are read in parallel under a
// budget that only fits one at a time, and reports progress.
func TestAnalyzeOrderBudgetProgress(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"healthy", "launch_bound", "dataloader_bound"} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, tracetest.Scenarios[name]().JSON(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var calls atomic.Int64
	res, err := Analyze(context.Background(), Options{Paths: paths, MemoryBudget: 1, Progress: func(read, total int64) {
		calls.Add(1)
		if read > total {
			t.Errorf("progress %d > total %d", read, total)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range res.Traces {
		if tr.Input.Path != paths[i] {
			t.Errorf("trace %d is %s, want %s", i, tr.Input.Path, paths[i])
		}
	}
	if calls.Load() == 0 {
		t.Error("no progress reported")
	}
	if len(res.Traces[2].Findings) == 0 || res.Traces[2].Findings[0].Rule != "dataloader-bound" {
		t.Errorf("dataloader_bound sample: findings %+v", res.Traces[2].Findings)
	}
}

func TestAnalyzeInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "et.json")
	os.WriteFile(bad, []byte(`{"schema":"1.0.1","nodes":[]}`), 0o644)
	_, err := Analyze(context.Background(), Options{Paths: []string{bad}})
	var ie *InputError
	if err == nil || !strings.Contains(err.Error(), bad) || !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an InputError naming %s", err, bad)
	}
}

// In a directory, a JSON file that is not a Kineto trace is skipped and
// listed; the traces beside it are analyzed.
func TestDirectorySkipsNonKineto(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "et.json"), []byte(`{"schema":"1.0.1","nodes":[]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "rank0.pt.trace.json"), tracetest.Healthy().JSON(), 0o644)
	res, err := Analyze(context.Background(), Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || len(res.Skipped) != 1 || res.Skipped[0].Path != filepath.Join(dir, "et.json") {
		t.Fatalf("traces %d skipped %+v", len(res.Traces), res.Skipped)
	}
	os.Remove(filepath.Join(dir, "rank0.pt.trace.json"))
	if _, err := Analyze(context.Background(), Options{Paths: []string{dir}}); err == nil {
		t.Error("a directory with no Kineto trace: want an error")
	}
}

// A damaged file in a directory is skipped and listed; the good traces
// are still analyzed.
func TestDirectorySkipsDamaged(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rank1.json"), []byte(`{"traceEvents": [`), 0o644)
	os.WriteFile(filepath.Join(dir, "rank0.json"), tracetest.Healthy().JSON(), 0o644)
	res, err := Analyze(context.Background(), Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "no timed events") {
		t.Fatalf("traces %d skipped %+v", len(res.Traces), res.Skipped)
	}
}

// A damaged file named as tensorboard_trace_handler names a rank's trace
// fails the run, naming it: a rank must not drop out of a job unnoticed.
func TestDirectoryFailsOnDamagedRankTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "host_1.1700000000.pt.trace.json")
	os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644)
	os.WriteFile(filepath.Join(dir, "host_0.1700000000.pt.trace.json"), tracetest.Healthy().JSON(), 0o644)
	_, err := Analyze(context.Background(), Options{Paths: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err %v, want an error naming %s", err, bad)
	}
}

// A team rule that times out does not sink the report.
func TestFailingRuleIsARuleError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "slow.rego"), []byte(`# METADATA
# title: Slow rule
# description: loops for a long time
# custom:
#   id: team-slow
#   severity: low
#   category: profiling-setup
#   requires: [steps_count]
#   references: [https://example.com]
package stepdoctor.rules.team_slow

import rego.v1

finding contains f if {
	xs := numbers.range(1, 20000)
	n := count([x | some x in xs; some y in xs; x != y])
	n > 0
	f := {"msg": "slow", "impact": 0}
}
`), 0o644)
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err = set.With(rules.Config{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(p, tracetest.DataloaderBound().JSON(), 0o644)
	res, err := Analyze(context.Background(), Options{Paths: []string{p}, Rules: set})
	if err != nil {
		t.Fatalf("a timed-out rule failed the analysis: %v", err)
	}
	tr := res.Traces[0]
	if len(res.RuleErrors) != 1 || len(tr.Findings) == 0 {
		t.Fatalf("rule errors %+v, %d findings", res.RuleErrors, len(tr.Findings))
	}
	// The failure is the result's, with the rule named; the trace's health
	// is left alone.
	e := res.RuleErrors[0]
	if e.Trace != p || e.Rule == "" || !strings.Contains(e.Source, ".rego:") || !strings.Contains(e.Message, "timed out") ||
		e.String() != fmt.Sprintf("%s: evaluate rule %s (%s): %s", p, e.Rule, e.Source, e.Message) {
		t.Errorf("rule error %+v (%s)", e, e)
	}
	for _, d := range tr.Health.Diagnostics {
		if d.Reason == "rule_failed" {
			t.Errorf("a rule failure filed as trace health: %+v", d)
		}
	}
}

// TestLoadRulesBesideReading: LoadRules is called once, its set is the one
// evaluated (the same findings as Rules), and its error ends Analyze, as
// it is and ahead of an input error, with the reading cancelled.
func TestLoadRulesBesideReading(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "t.json")
	os.WriteFile(good, tracetest.DataloaderBound().JSON(), 0o644)
	set, err := rules.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Analyze(context.Background(), Options{Paths: []string{good}, Rules: set})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := Analyze(context.Background(), Options{Paths: []string{good}, LoadRules: func() (*rules.Set, error) {
		calls++
		return set, nil
	}})
	if err != nil || calls != 1 {
		t.Fatalf("LoadRules called %d times, err %v", calls, err)
	}
	if w, g := findingIDs(want), findingIDs(got); w != g || w == "" {
		t.Errorf("findings with LoadRules %q, with Rules %q", g, w)
	}

	// The rules' error comes as it is, ahead of a trace that fails to
	// parse.
	damaged := filepath.Join(dir, "damaged.json")
	os.WriteFile(damaged, []byte(`{"traceEvents": [{"ph": "X", "ts": `), 0o644)
	broken := errors.New("read rules dir team: permission denied")
	for _, p := range []string{good, damaged} {
		_, err := Analyze(context.Background(), Options{Paths: []string{p}, LoadRules: func() (*rules.Set, error) { return nil, broken }})
		if err != broken {
			t.Errorf("%s: err %v, want the rules' error as it is", p, err)
		}
	}
	if _, err := Analyze(context.Background(), Options{Paths: []string{damaged}, LoadRules: func() (*rules.Set, error) { return set, nil }}); err == nil {
		t.Errorf("%s: no error", damaged)
	}
	// Nor does it wait for a read that does not end: stdin open, silent.
	pr, pw := io.Pipe()
	defer pw.Close()
	got2 := make(chan error, 1)
	go func() {
		_, err := Analyze(context.Background(), Options{Paths: []string{"-"}, Stdin: pr, LoadRules: func() (*rules.Set, error) { return nil, broken }})
		got2 <- err
	}()
	select {
	case err := <-got2:
		if err != broken {
			t.Errorf("stdin: err %v, want the rules' error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed rule load waited for a read that does not end")
	}
}

func findingIDs(r *Result) string {
	var ids []string
	for _, tr := range r.Traces {
		for _, f := range tr.Findings {
			ids = append(ids, f.Rule)
		}
	}
	return strings.Join(ids, " ")
}

// TestSkippable: inside a directory only a file that is not a trace is
// skipped; one that could not be read or changed while it was read fails
// the run, as do named files and tensorboard_trace_handler rank names.
func TestSkippable(t *testing.T) {
	notTrace := &InputError{fmt.Errorf("parse trace d/config.json: %w", trace.ErrNotKineto)}
	changed := &InputError{fmt.Errorf("parse trace d/rank0.json: byte 9: %w", trace.ErrChanged)}
	denied := &InputError{fmt.Errorf("open trace: %w", &fs.PathError{Op: "open", Path: "d/rank0.json", Err: fs.ErrPermission})}
	for _, tt := range []struct {
		f    inputFile
		err  error
		want bool
	}{
		{inputFile{path: "d/config.json", fromDir: true}, notTrace, true},
		{inputFile{path: "d/config.json"}, notTrace, false},
		{inputFile{path: "d/w0.pt.trace.json", fromDir: true}, notTrace, false},
		{inputFile{path: "d/rank0.json", fromDir: true}, changed, false},
		{inputFile{path: "d/rank0.json", fromDir: true}, denied, false},
		{inputFile{path: "d/rank0.json", fromDir: true}, errors.New("internal"), false},
	} {
		if got := skippable(tt.f, tt.err); got != tt.want {
			t.Errorf("skippable(%+v, %v) = %v, want %v", tt.f, tt.err, got, tt.want)
		}
	}
}
