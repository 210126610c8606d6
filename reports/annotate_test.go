package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
	"github.com/stepdoctor/stepdoctor/rules"
)

// annotated is what a test reads back from an annotated trace with
// encoding/json: the added events, and the tracks and starts of the
// trace's own complete events.
type annotated struct {
	pid       string                    // the stepdoctor process
	threads   map[string]string         // tid -> thread_name on that process
	slices    []map[string]any          // X events on that process
	instants  []map[string]any          // ph i, cat stepdoctor
	flows     map[string][2]bool        // flow id -> (s seen, f seen)
	flowEnds  []map[string]any          // ph f, cat stepdoctor
	ownStarts map[[2]string]map[int]int // (pid, tid) spelt with their JSON type -> start ns -> count, the input's own X events
}

func jsonID(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// trackID spells a pid or tid with its JSON type: Perfetto puts "7" and 7
// on different tracks.
func trackID(v any) string {
	if s, ok := v.(string); ok {
		return strconvQuote(s)
	}
	return jsonID(v)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func readAnnotated(t *testing.T, path string) annotated {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	var evs []any
	switch d := doc.(type) {
	case map[string]any:
		evs, _ = d["traceEvents"].([]any)
	case []any:
		evs = d
	}
	a := annotated{threads: map[string]string{}, flows: map[string][2]bool{}, ownStarts: map[[2]string]map[int]int{}}
	for _, x := range evs {
		e, ok := x.(map[string]any)
		if !ok {
			continue
		}
		if e["ph"] == "M" && e["name"] == "process_name" {
			if args, _ := e["args"].(map[string]any); args["name"] == AnnotateCategory {
				a.pid = jsonID(e["pid"])
			}
		}
	}
	for _, x := range evs {
		e, ok := x.(map[string]any)
		if !ok {
			continue
		}
		pid, tid := jsonID(e["pid"]), jsonID(e["tid"])
		mine := e["cat"] == AnnotateCategory
		switch {
		case e["ph"] == "M" && e["name"] == "thread_name" && pid == a.pid:
			args, _ := e["args"].(map[string]any)
			a.threads[tid], _ = args["name"].(string)
		case e["ph"] == "X" && mine:
			a.slices = append(a.slices, e)
		case e["ph"] == "X":
			k := [2]string{trackID(e["pid"]), trackID(e["tid"])}
			if a.ownStarts[k] == nil {
				a.ownStarts[k] = map[int]int{}
			}
			ts, _ := parseUSns(jsonID(e["ts"]))
			a.ownStarts[k][ts]++
		case e["ph"] == "i" && mine:
			a.instants = append(a.instants, e)
		case (e["ph"] == "s" || e["ph"] == "f") && mine:
			id := jsonID(e["id"])
			p := a.flows[id]
			if e["ph"] == "s" {
				p[0] = true
			} else {
				p[1] = true
				a.flowEnds = append(a.flowEnds, e)
			}
			a.flows[id] = p
		}
	}
	return a
}

// parseUSns reads a microsecond timestamp's text as whole nanoseconds.
func parseUSns(s string) (int, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000")[:3]
	var w, f int
	if _, err := fmt.Sscan(whole, &w); err != nil {
		return 0, false
	}
	fmt.Sscan(frac, &f)
	if strings.HasPrefix(whole, "-") {
		return w*1000 - f, true
	}
	return w*1000 + f, true
}

// checkAnnotated checks an annotated trace against its input and the
// findings written into it: the project's reader gives the same facts and
// findings and no new diagnostics, and every example has its instant and
// flow on its own track, at an event of the input that starts there.
func checkAnnotated(t *testing.T, in, out string, before *engine.TraceResult) {
	t.Helper()
	sameAnalysis(t, in, out, before, facts.Config{})
	a := readAnnotated(t, out)
	if a.pid == "" {
		t.Fatalf("%s: no %q process in the annotated trace", in, AnnotateCategory)
	}
	if len(a.threads) != len(before.Findings) {
		t.Errorf("%s: %d threads on the stepdoctor process, want one per finding (%d)", in, len(a.threads), len(before.Findings))
	}
	examples, withExamples := 0, 0
	for _, f := range before.Findings {
		examples += len(f.Examples)
		if len(f.Examples) > 0 {
			withExamples++
		}
	}
	if len(a.slices) != withExamples {
		t.Errorf("%s: %d finding slices, want %d (one per finding with examples)", in, len(a.slices), withExamples)
	}
	if len(a.instants) != examples || len(a.flows) != examples {
		t.Errorf("%s: %d instants and %d flows, want one each per example (%d)", in, len(a.instants), len(a.flows), examples)
	}
	for id, p := range a.flows {
		if !p[0] || !p[1] {
			t.Errorf("%s: flow %s lacks its start or its end", in, id)
		}
	}
	for _, e := range a.instants {
		k := [2]string{trackID(e["pid"]), trackID(e["tid"])}
		ts, _ := parseUSns(jsonID(e["ts"]))
		if jsonID(e["pid"]) == a.pid || a.ownStarts[k][ts] == 0 {
			t.Errorf("%s: instant %v at %s is not at the start of an event of track %v", in, e["name"], jsonID(e["ts"]), k)
		}
	}
	for _, e := range a.flowEnds {
		if e["bp"] != "e" || jsonID(e["pid"]) == a.pid {
			t.Errorf("%s: flow end %v does not bind to the example's enclosing slice", in, e)
		}
	}
	for _, s := range a.slices {
		if jsonID(s["pid"]) != a.pid {
			t.Errorf("%s: finding slice %v is not on the stepdoctor process", in, s["name"])
		}
	}
}

// sameAnalysis checks that the project's reader gives the annotated trace
// out the facts and findings of its input (before, analysed with cfg) and
// no diagnostic the input did not have.
func sameAnalysis(t *testing.T, in, out string, before *engine.TraceResult, cfg facts.Config) {
	t.Helper()
	// trace_bytes_per_step is the file's size per step: the annotation
	// adds bytes by design, and no event.
	res, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{out}, Facts: cfg})
	if err != nil {
		t.Fatalf("analyze annotated %s: %v", out, err)
	}
	after := res.Traces[0]
	fb, fa := factsJSON(before.Facts), factsJSON(after.Facts)
	if !bytes.Equal(fb, fa) {
		t.Errorf("%s: the annotated trace's facts differ from the input's\n%s", in, firstDiff(indentJSON(fa), indentJSON(fb)))
	}
	if len(after.Findings) != len(before.Findings) {
		t.Errorf("%s: %d findings on the annotated trace, %d on the input", in, len(after.Findings), len(before.Findings))
	}
	for k := range min(len(after.Findings), len(before.Findings)) {
		if a, b := after.Findings[k], before.Findings[k]; a.Rule != b.Rule || a.Message != b.Message {
			t.Errorf("%s: finding %d is %s %q on the annotated trace, %s %q on the input", in, k+1, a.Rule, a.Message, b.Rule, b.Message)
		}
	}
	old := map[string]int{}
	for _, d := range before.Health.Diagnostics {
		old[string(d.Kind)+" "+d.Reason+" "+d.Message] += d.Count
	}
	for _, d := range after.Health.Diagnostics {
		k := string(d.Kind) + " " + d.Reason + " " + d.Message
		if old[k] < d.Count {
			t.Errorf("%s: the annotated trace has a new diagnostic: %s", in, d)
		}
	}
}

func factsJSON(f *facts.Facts) []byte {
	c := *f
	c.TraceBytesPerStep = nil
	b, _ := json.Marshal(&c)
	return b
}

func indentJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", " ") != nil {
		return b
	}
	return buf.Bytes()
}

func annotateOne(t *testing.T, in, out string) *engine.TraceResult {
	t.Helper()
	r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{in}})
	if err != nil {
		t.Fatalf("analyze %s: %v", in, err)
	}
	if err := AnnotateResult(out, r); err != nil {
		t.Fatalf("annotate %s: %v", in, err)
	}
	return r.Traces[0]
}

// TestAnnotateGolden pins the annotated sample trace (made by
// engine/trace/tracetest) byte for byte and checks it.
func TestAnnotateGolden(t *testing.T) {
	in := filepath.Join("..", "testdata", "traces", "dataloader_bound.pt.trace.json")
	out := filepath.Join(t.TempDir(), "dataloader_bound.annotated.json")
	tr := annotateOne(t, in, out)
	if len(tr.Findings) < 2 {
		t.Fatalf("the sample trace gave %d findings; the golden needs several", len(tr.Findings))
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	// The input's bytes are all there, in order, around one insertion.
	end := bytes.LastIndexByte(src, ']')
	if !bytes.HasPrefix(got, src[:end]) || !bytes.HasSuffix(got, src[end:]) {
		t.Errorf("the annotated trace does not keep the input's bytes around the insertion")
	}
	checkAnnotated(t, in, out, tr)
	golden := filepath.Join("testdata", "annotate_dataloader_bound.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run go test ./reports -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden; run go test ./reports -update and review the diff\n%s", golden, firstDiff(got, want))
	}
}

// TestAnnotateRealTraces annotates every recorded trace in
// ../testdata/recorded and every trace in ../shared/traces when present
// (gzip in, gzip out) and checks each against its input: same facts, same
// findings, no new diagnostics, every example marked on its own track.
func TestAnnotateRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("real traces skipped in -short mode")
	}
	var paths []string
	walk := func(root string) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && engine.IsTraceName(p) && !strings.HasPrefix(d.Name(), "REFERENCE") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	walk(filepath.Join("..", "testdata", "recorded"))
	shared := filepath.Join("..", "..", "shared", "traces")
	if _, err := os.Stat(shared); err != nil {
		t.Logf("shared traces skipped: %s not present", shared)
	} else {
		walk(shared)
	}
	dir := t.TempDir()
	checked, examples, autoChecked := 0, 0, 0
	for k, p := range paths {
		r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{p}})
		if err != nil {
			var ie *engine.InputError
			if errors.As(err, &ie) {
				continue // not a Kineto trace
			}
			t.Errorf("%s: %v", p, err)
			continue
		}
		// The same base name keeps the rank the file name gives.
		sub := filepath.Join(dir, fmt.Sprint(k))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(sub, filepath.Base(p))
		if err := AnnotateResult(out, r); err != nil {
			t.Errorf("annotate %s: %v", p, err)
			continue
		}
		checkAnnotated(t, p, out, r.Traces[0])
		checked++
		if !r.Traces[0].Facts.HasSteps {
			// The annotation's names must not look like an engine's step
			// markers either.
			auto := facts.Config{StepMarker: "auto"}
			ra, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{p}, Facts: auto})
			if err != nil {
				t.Fatalf("analyze %s with --step-marker auto: %v", p, err)
			}
			sameAnalysis(t, p, out, ra.Traces[0], auto)
			autoChecked++
		}
		for _, f := range r.Traces[0].Findings {
			examples += len(f.Examples)
		}
	}
	t.Logf("annotated %d real traces (%d example events marked; %d without steps also checked with --step-marker auto)", checked, examples, autoChecked)
	if checked == 0 {
		t.Skip("no real Kineto traces found")
	}
}

// annotateString runs AnnotateTrace on an in-memory trace.
func annotateString(src string, fs []rules.Finding) (string, error) {
	var b bytes.Buffer
	err := AnnotateTrace(&b, strings.NewReader(src), fs)
	return b.String(), err
}

func oneFinding(title string, ex ...facts.EventRef) []rules.Finding {
	return []rules.Finding{{Rule: "r", Title: title, Severity: rules.Severity("high"), Message: title, Examples: ex}}
}

// TestAnnotateShapes covers the trace shapes the reader accepts: keys
// before and after traceEvents, a bare array, an empty array, a trailing
// comma, repaired tokens, and strings holding brackets and quotes.
func TestAnnotateShapes(t *testing.T) {
	ex := facts.EventRef{Name: "k", TSUS: 10, TSNS: 10_000, DurUS: 5, PID: "0", TID: "7"}
	cases := []struct{ name, src string }{
		{"keys after", `{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5}],"displayTimeUnit":"ms"}`},
		{"keys before", `{"schemaVersion":1,"deviceProperties":[{"id":0}],"x":{"traceEvents":[1]},"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5}]}`},
		{"bare array", `[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5}]`},
		{"empty", `{"traceEvents":[ ]}`},
		{"trailing comma", `{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5},
]}`},
		{"repaired tokens", `{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"v":NaN}}]}`},
		{"brackets in strings", `{"a":"]}\"[","traceEvents":[{"ph":"X","name":"k]\"}","pid":0,"tid":7,"ts":10,"dur":5}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := annotateString(c.src, oneFinding("t", ex))
			if err != nil {
				t.Fatal(err)
			}
			end := strings.LastIndexByte(c.src, ']')
			if !strings.HasPrefix(got, c.src[:end]) || !strings.HasSuffix(got, c.src[end:]) {
				t.Fatalf("input bytes not kept:\n%s", got)
			}
			var doc any
			if err := json.Unmarshal([]byte(strings.ReplaceAll(got, "NaN", "0")), &doc); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, got)
			}
			tr, err := trace.Parse(strings.NewReader(got), "annotated.json")
			if err != nil {
				t.Fatalf("the reader rejects the annotated trace: %v", err)
			}
			in, _ := trace.Parse(strings.NewReader(c.src), "in.json")
			var n int
			for i := range tr.Events {
				if tr.Str(tr.Events[i].CatName) == AnnotateCategory {
					n++
				}
			}
			if n != 2 { // the finding's slice and the example's instant
				t.Errorf("the reader kept %d stepdoctor events, want 2", n)
			}
			if in != nil && len(tr.Health.Diagnostics) > len(in.Health.Diagnostics) {
				t.Errorf("new diagnostics: %v (input %v)", tr.Health.Diagnostics, in.Health.Diagnostics)
			}
		})
	}
}

// TestAnnotateRefuses covers inputs that cannot be annotated: no events
// array, a cut trace, unbalanced brackets.
func TestAnnotateRefuses(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{"schema":"1.0.1","nodes":[]}`, "no traceEvents array"},
		{`{"traceEvents":[{"ph":"X","name":"k","pid":0`, "ends before its traceEvents array closes"},
		{`{"traceEvents":{"a":1}}}`, "unexpected"},
		{`{"traceEvents":` + strings.Repeat("[", maxSpliceDepth+10), "nesting deeper"},
	} {
		_, err := annotateString(c.src, oneFinding("t"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestAnnotateIDs: the stepdoctor process and its threads take ids the
// trace does not use, flows take ids above the trace's, and string pids
// stay strings on the example's track.
func TestAnnotateIDs(t *testing.T) {
	src := `{"traceEvents":[
{"ph":"X","name":"a","pid":41,"tid":"900","ts":1,"dur":5,"args":{"pid":99999}},
{"ph":"X","name":"b","pid":"Spans","tid":"stream 7","ts":2,"dur":1},
{"ph":"s","id":77,"pid":-1,"tid":3,"ts":1,"cat":"ac2g","name":"ac2g"}]}`
	ex := []facts.EventRef{{Name: "a", TSNS: 1000, TSUS: 1, DurUS: 5, PID: "41", TID: "900"}, {Name: "b", TSNS: 2000, TSUS: 2, DurUS: 1, PID: "Spans", TID: "stream 7"}}
	got, err := annotateString(src, oneFinding("t", ex...))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"name":"process_name","ph":"M","ts":1.000,"pid":42,`,
		`"ph":"X","ts":1.000,"dur":5.000,"pid":42,"tid":901,`,
		`"ph":"i","s":"t","ts":1.000,"pid":41,"tid":"900",`,
		`"ph":"i","s":"t","ts":2.000,"pid":"Spans","tid":"stream 7"`,
		`"ph":"s","id":78,"ts":1.001,"pid":42,"tid":901}`,
		`"ph":"f","bp":"e","id":78,"ts":1.001,"pid":41,"tid":"900"}`, // quoted as the event has it
	} {
		if !strings.Contains(got, want) {
			t.Errorf("annotated trace lacks %s:\n%s", want, got)
		}
	}
}

// TestAnnotateEscapes: titles, messages and event names are untrusted
// (team rules, trace names); each is JSON-escaped and bounded, and the
// reader takes the result without a repair.
func TestAnnotateEscapes(t *testing.T) {
	hostileText := "\"]}<script>\\\n\x00\xff" + strings.Repeat("é", 3000)
	ex := facts.EventRef{Name: hostileText, TSNS: 10_000, TSUS: 10, DurUS: 5, PID: "0", TID: "7"}
	src := `{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5}]}`
	got, err := annotateString(src, oneFinding(hostileText, ex))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for _, e := range doc.TraceEvents[1:] {
		if n, _ := e["name"].(string); len(n) > maxAnnotateString+16 {
			t.Errorf("name of %d bytes, want at most %d", len(n), maxAnnotateString)
		}
	}
	tr, err := trace.Parse(strings.NewReader(got), "annotated.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Health.Diagnostics {
		t.Errorf("the reader repaired the annotated trace: %s", d)
	}
}

// TestAnnotateResultRefuses: several traces, stdin and facts files have
// no single trace file to copy.
func TestAnnotateResultRefuses(t *testing.T) {
	two := &engine.Result{Traces: []*engine.TraceResult{{}, {}}}
	stdin := &engine.Result{Traces: []*engine.TraceResult{{Input: engine.Input{Path: "-"}}}}
	factsFile := &engine.Result{Traces: []*engine.TraceResult{{Input: engine.Input{Path: "rank0.jsonl"}}}}
	for _, c := range []struct {
		r    *engine.Result
		want string
	}{{two, "2 were read"}, {stdin, "stdin"}, {factsFile, "facts file"}} {
		err := AnnotateResult(filepath.Join(t.TempDir(), "out.json"), c.r)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// TestAnnotateChangedSinceAnalyzed: a trace file that ends before the
// bytes its analysis read (cut between analyze's read and the annotate
// pass) fails saying it changed, not that it is a cut trace, and writes
// no annotated file; the same file unchanged is annotated.
func TestAnnotateChangedSinceAnalyzed(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "traces", "launch_bound.pt.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "t.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(in, src[:len(src)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	r := &engine.Result{Traces: []*engine.TraceResult{{Input: engine.Input{Path: in, Bytes: int64(len(src))}}}}
	err = AnnotateResult(out, r)
	if err == nil || !strings.Contains(err.Error(), "changed since it was analyzed") || !strings.Contains(err.Error(), in) {
		t.Errorf("cut since analyzed: error %v, want one naming %s that says it changed since it was analyzed", err, in)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("an annotated file was written for a changed trace")
	}
	if err := os.WriteFile(in, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AnnotateResult(out, r); err != nil {
		t.Errorf("unchanged: %v", err)
	}
}

// BenchmarkAnnotate measures the copy-and-splice pass (uncompressed, no
// gzip) on the sample launch-bound trace's events repeated to about 20 MB.
func BenchmarkAnnotate(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "traces", "launch_bound.pt.trace.json"))
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(src, []byte(`"traceEvents": [`)) {
		b.Fatal("the sample trace has no traceEvents array")
	}
	end := bytes.LastIndexByte(src, ']')
	start := bytes.Index(src, []byte(`"traceEvents": [`)) + len(`"traceEvents": [`)
	body := bytes.TrimSpace(src[start:end])
	var big bytes.Buffer
	big.Write(src[:start])
	for big.Len() < 20<<20 {
		if big.Len() > start {
			big.WriteByte(',')
		}
		big.Write(body)
	}
	big.Write(src[end:])
	in := big.Bytes()
	fs := oneFinding("t", facts.EventRef{Name: "k", TSNS: 10_000, TSUS: 10, DurUS: 5, PID: "0", TID: "7"})
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	defer tracetest.ReportCPU(b, int64(len(in)), tracetest.CPUTime())
	for range b.N {
		if err := AnnotateTrace(io.Discard, bytes.NewReader(in), fs); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzAnnotate: on any input AnnotateTrace returns (no panic); when it
// succeeds on valid JSON the output is valid JSON that keeps the input's
// bytes around one insertion.
func FuzzAnnotate(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":10,"dur":5}],"displayTimeUnit":"ms"}`,
		`[{"ph":"X","name":"k","pid":"Spans","tid":"stream 7","ts":10,"dur":5}]`,
		`{"a":"]}\"[","traceEvents":[{"name":"k]\"}","pid":-1,"id":9}, ]}`,
		`{"traceEvents":[`,
	} {
		f.Add([]byte(s))
	}
	ex := facts.EventRef{Name: "k\"<", TSNS: 10_000, TSUS: 10, DurUS: 5, PID: "0", TID: "stream 7"}
	fs := oneFinding("t\"]}", ex)
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := AnnotateTrace(&out, bytes.NewReader(in), fs); err != nil || !json.Valid(in) {
			return
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("valid input, invalid output:\n%s", out.Bytes())
		}
		if out.Len() <= len(in) {
			t.Fatalf("nothing added")
		}
	})
}
