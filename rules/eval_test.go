package rules

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func boolp(v bool) *bool     { return &v }

func mustBuiltin(t *testing.T) *Set {
	t.Helper()
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gpuFacts is a GPU trace with 5 steps that trips dataloader-bound,
// gpu-underutilized, host-sync-in-step and pageable-memcpy. Its idle-gap
// causes partition gpu_idle_ratio 0.55: dataloader 0.2, sync 0.04, launch
// 0.01, cpu_op 0.02, untraced 0.28.
func gpuFacts() *facts.Facts {
	ex := func(name string, n int) []facts.EventRef {
		var out []facts.EventRef
		for i := 0; i < n; i++ {
			out = append(out, facts.EventRef{Name: name, TSUS: float64(1000 * i), DurUS: float64(100 - i), PID: "1", TID: "1"})
		}
		return out
	}
	return &facts.Facts{
		SchemaVersion: facts.SchemaVersion, HasGPU: true, HasSteps: true, StepsCount: 5, WindowUS: 500000,
		GPUBusyRatio: f64(0.45), GPUIdleRatio: f64(0.55),
		KernelCount: i64(5000), KernelsPerStep: f64(1000), KernelLaunchesPerMS: f64(10), ShortKernelRatio: f64(0.3),
		MemcpyCount: i64(10), MemcpyPerStep: f64(2), MemcpyHtoDCount: i64(10), MemcpyDtoHCount: i64(0), MemcpyDtoDCount: i64(0),
		MemcpyPageableCount: i64(10), MemcpyPageableHtoDCount: i64(10), MemcpyBytes: i64(1 << 20), MemcpyTimeRatio: f64(0.03),
		SyncPerStep: f64(2), DataloaderTimeRatio: f64(0.244), DataloaderSingleProcess: boolp(true),
		GPUIdleDataloaderRatio: f64(0.2), GPUIdleSyncRatio: f64(0.04), GPUIdleOptimizerRatio: f64(0),
		GPUIdleLaunchRatio: f64(0.01), GPUIdleCPUOpRatio: f64(0.02), GPUIdleUntracedRatio: f64(0.28),
		Examples: map[string][]facts.EventRef{
			"sync":            ex("cudaStreamSynchronize", 7),
			"pageable_memcpy": ex("Memcpy HtoD (Pageable -> Device)", 2),
			"dataloader":      ex("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 3),
		},
	}
}

func TestEvaluateBuiltin(t *testing.T) {
	s := mustBuiltin(t)
	fs, ne, err := s.Evaluate(context.Background(), gpuFacts())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule)
	}
	// Impacts partition the idle time: dataloader 0.2 confirmed; untraced
	// 0.28 x 0.6 (likely) = 0.168; sync 0.04; pageable 0.03. The idle
	// share while the host issues work (0.03) is under idle-gap-launch's 5%.
	want := []string{"dataloader-bound", "gpu-underutilized", "host-sync-in-step", "pageable-memcpy"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("findings %v, want %v", ids, want)
	}
	var sum float64
	for _, f := range fs {
		sum += f.Impact
	}
	if sum > 0.55+0.03+1e-9 { // idle time plus the copy (busy) time
		t.Errorf("impacts sum to %v, more than the time they can explain", sum)
	}
	for _, n := range ne {
		switch n.Rule {
		case "dataloader-bound", "host-sync-in-step", "pageable-memcpy", "gpu-underutilized", "launch-bound", "idle-gap-launch":
			t.Errorf("not evaluated: %+v", n)
		}
	}
	dl := fs[0]
	if dl.Message != "DataLoader takes 24.4% of step time (single-process iterator, num_workers=0); the GPU waits on it 20.0% of step time" {
		t.Errorf("message %q", dl.Message)
	}
	if dl.Severity != SeverityHigh || dl.Confidence != Confirmed || dl.Impact != 0.2 || dl.Category != "input-pipeline" {
		t.Errorf("dataloader finding %+v", dl)
	}
	for _, ev := range dl.Evidence {
		if ev.Unit == "bool" || ev.Name == "dataloader_single_process" {
			t.Errorf("boolean in numeric evidence: %+v", ev)
		}
	}
	if len(dl.Examples) != 3 || dl.Doc == "" || len(dl.References) == 0 {
		t.Errorf("dataloader finding lacks examples/doc/references: %+v", dl)
	}
	hs := fs[2]
	if len(hs.Examples) != MaxExamples || hs.Examples[0].Name != "cudaStreamSynchronize" {
		t.Errorf("host-sync examples: %+v", hs.Examples)
	}
	if hs.Severity != SeverityMedium || hs.Impact != 0.04 {
		t.Errorf("host-sync severity/impact: %s %v", hs.Severity, hs.Impact)
	}
	if gu := fs[1]; gu.Severity != SeverityMedium || gu.Confidence != Likely || gu.Impact != 0.28 {
		t.Errorf("gpu-underutilized: %+v", gu)
	}
	pm := fs[3]
	if len(pm.Evidence) != 4 || pm.Evidence[0].Name != "memcpy_pageable_htod_count" || pm.Evidence[0].Unit != "count" {
		t.Errorf("pageable-memcpy auto evidence: %+v", pm.Evidence)
	}
}

func TestNotEvaluatedHints(t *testing.T) {
	s := mustBuiltin(t)
	// CPU-only trace without steps.
	f := &facts.Facts{SchemaVersion: facts.SchemaVersion, WindowUS: 1000}
	fs, ne, err := s.Evaluate(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Rule != "profile-too-short" || !strings.Contains(fs[0].Message, "no ProfilerStep#N spans") {
		t.Fatalf("findings %+v", fs)
	}
	hints := map[string]NotEvaluated{}
	for _, n := range ne {
		hints[n.Rule] = n
	}
	if got := hints["launch-bound"]; got.Hint != HintCUDA || len(got.Missing) != 6 {
		t.Errorf("launch-bound: %+v", got)
	}
	if got := hints["memory-near-capacity"]; got.Hint != HintMemory {
		t.Errorf("memory-near-capacity: %+v", got)
	}
	// AMP reads fp32 GEMMs from kernel names too: it needs CUDA activity,
	// not record_shapes.
	if got := hints["amp-not-used"]; !strings.Contains(got.Hint, HintCUDA) || strings.Contains(got.Hint, HintShapes) {
		t.Errorf("amp-not-used: %+v", got)
	}
	if got := hints["step-time-variance"]; got.Hint != stepsHint(f) || !strings.Contains(got.Hint, HintSteps) || !strings.Contains(got.Hint, "--step-marker") {
		t.Errorf("step-time-variance: %+v", got)
	}
	if got := hints["dataloader-bound"]; got.Hint != stepsHint(f) {
		t.Errorf("dataloader-bound: %+v", got)
	}
	if got := hints["host-sync-in-step"]; !strings.Contains(got.Hint, "ProfilerActivity.CUDA") || !strings.Contains(got.Hint, "prof.step()") {
		t.Errorf("host-sync-in-step: %+v", got)
	}
	for _, n := range ne {
		if n.Hint == "" {
			t.Errorf("%s: no hint", n.Rule)
		}
	}
}

func TestHintFor(t *testing.T) {
	gpu := &facts.Facts{HasGPU: true, HasSteps: true, HasBackward: true}
	inference := &facts.Facts{HasGPU: true}
	found := &facts.Facts{HasGPU: true, StepMarkerFound: &facts.StepMarker{Source: "auto", Engine: "vllm", Label: "vLLM execute annotations", Steps: 2}}
	for _, tt := range []struct {
		missing []string
		f       *facts.Facts
		want    string
	}{
		{[]string{"has_shapes"}, gpu, HintShapes},
		{[]string{"has_memory"}, gpu, HintMemory},
		{[]string{"has_stack"}, gpu, HintStack},
		{[]string{"has_gpu"}, &facts.Facts{}, HintCUDA},
		{[]string{"has_gpu", "gpu_idle_ratio"}, &facts.Facts{GPUActivityMissing: true}, HintGPUMissing},
		{[]string{"launch_bound_kernel_ratio"}, gpu, HintLaunch},
		{[]string{"dataloader_single_process"}, gpu, HintLoader},
		{[]string{"world_size"}, gpu, HintDist},
		// Only NCCL kernels ran: no compute kernel to rank; none at all.
		{[]string{"top_kernel_name"}, &facts.Facts{HasGPU: true, HasSteps: true, HasBackward: true, KernelCount: new(int64(1))}, HintCompute},
		{[]string{"top_kernel_name"}, &facts.Facts{HasGPU: true, HasSteps: true, HasBackward: true, KernelCount: new(int64(0))}, HintKernels},
		{[]string{"kernels_per_step"}, &facts.Facts{}, HintCUDA + "; " + HintSteps + ", or name the span of one iteration with --step-marker REGEX"},
		{[]string{"dataloader_time_ratio"}, inference, HintLoaderInference},
		{[]string{"sync_per_step"}, inference, "the trace has no ProfilerStep#N: name the host span of one iteration with --step-marker REGEX (a record_function label around each batch or forward call), or call prof.step() after each iteration"},
		{[]string{"has_steps"}, found, "the trace has no ProfilerStep#N but shows 2 iteration span(s) of vLLM execute annotations: rerun with --step-marker auto to get per-step facts"},
	} {
		if got := hintFor(tt.missing, tt.f); got != tt.want {
			t.Errorf("hintFor(%v) = %q, want %q", tt.missing, got, tt.want)
		}
	}
}

func TestRankDeterministic(t *testing.T) {
	base := []Finding{
		{Rule: "a", Impact: 0.5, Confidence: Likely, Severity: SeverityHigh},      // 0.30
		{Rule: "b", Impact: 0.35, Confidence: Confirmed, Severity: SeverityLow},   // 0.35
		{Rule: "c", Impact: 0.3, Confidence: Confirmed, Severity: SeverityMedium}, // 0.30, medium
		{Rule: "d", Impact: 0.3, Confidence: Confirmed, Severity: SeverityMedium}, // 0.30, medium, id d
		{Rule: "e", Impact: 0, Confidence: Confirmed, Severity: SeverityInfo},     // 0
		{Rule: "d", Impact: 0.3, Confidence: Confirmed, Severity: SeverityMedium, Message: "b"},
		{Rule: "f", Impact: 0.3, Confidence: Confirmed, Severity: SeverityHigh},
	}
	want := []string{"b", "a", "f", "c", "d:", "d:b", "e"} // a and f tie at 0.3 and high: id
	key := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			k := f.Rule
			if f.Rule == "d" {
				k += ":" + f.Message
			}
			out = append(out, k)
		}
		return out
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		fs := append([]Finding(nil), base...)
		r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		Rank(fs)
		if got := key(fs); !reflect.DeepEqual(got, want) {
			t.Fatalf("permutation %d: got %v, want %v", i, got, want)
		}
	}
	if Score(Finding{Impact: 0.5, Confidence: Likely}) != 0.3 || Score(Finding{Impact: 0.5, Confidence: "guess"}) != 0.3 {
		t.Error("likely weight")
	}
}

func TestConfigParamsSeverityDisable(t *testing.T) {
	s := mustBuiltin(t)
	s2, err := s.With(Config{
		Params:   Params{"dataloader-bound": {"min_ratio": 0.3}},
		Severity: map[string]Severity{"pageable-memcpy": SeverityHigh, "dataloader-bound": SeverityLow},
		Disable:  []string{"host-sync-in-step"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Rule("host-sync-in-step"); ok {
		t.Error("disabled rule still listed")
	}
	if r, _ := s2.Rule("dataloader-bound"); r.Params["min_ratio"] != 0.3 {
		t.Errorf("params not applied: %v", r.Params)
	}
	fs, _, err := s2.Evaluate(context.Background(), gpuFacts())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule)
		if f.Rule == "pageable-memcpy" && f.Severity != SeverityHigh {
			t.Errorf("severity override not applied: %s", f.Severity)
		}
	}
	// dataloader 0.244 < 0.3 is quiet now, so idle-gap-dataloader reports
	// the DataLoader's idle time (0.2) instead; host-sync disabled, and its
	// sync idle time (0.04) is under idle-gap-sync's 5%. pageable-memcpy,
	// pinned high, ranks above the medium gpu-underutilized.
	if want := []string{"idle-gap-dataloader", "pageable-memcpy", "gpu-underutilized"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("findings %v, want %v", ids, want)
	}
	// The original set is unchanged.
	if r, _ := s.Rule("dataloader-bound"); r.Params["min_ratio"] != 0.05 {
		t.Errorf("original set changed: %v", r.Params)
	}
	// A pinned severity wins over the finding's own (dataloader-bound
	// would say high for a single-process loader).
	s3, err := s.With(Config{Severity: map[string]Severity{"dataloader-bound": SeverityLow}})
	if err != nil {
		t.Fatal(err)
	}
	fs, _, _ = s3.Evaluate(context.Background(), gpuFacts())
	for _, f := range fs {
		if f.Rule == "dataloader-bound" && f.Severity != SeverityLow {
			t.Errorf("pinned severity: got %s", f.Severity)
		}
	}
	// expr params.
	s4, err := s.With(Config{Params: Params{"profile-too-short": {"min_steps": 10}}})
	if err != nil {
		t.Fatal(err)
	}
	fs, _, _ = s4.Evaluate(context.Background(), gpuFacts())
	found := false
	for _, f := range fs {
		if f.Rule == "profile-too-short" {
			found = true
			if !strings.Contains(f.Message, "Only 5 profiled steps; at least 10") {
				t.Errorf("message %q", f.Message)
			}
		}
	}
	if !found {
		t.Error("profile-too-short with min_steps=10 did not fire on 5 steps")
	}
}

func TestConfigErrors(t *testing.T) {
	s := mustBuiltin(t)
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Params: Params{"no-such": {"x": 1}}}, "override params of rule no-such: no such rule"},
		{Config{Params: Params{"dataloader-bound": {"min_ratoi": 1}}}, "override param min_ratoi of rule dataloader-bound: the rule declares no such param (has: min_ratio)"},
		{Config{Params: Params{"dataloader-bound": {"min_ratio": "high"}}}, "want a number, got a string"},
		{Config{Disable: []string{"nope"}}, "disable rule nope: no such rule"},
		{Config{Severity: map[string]Severity{"launch-bound": "urgent"}}, `"urgent" is not one of`},
	} {
		_, err := s.With(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("With(%+v) = %v, want error containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestSandboxRejectsAtLoad(t *testing.T) {
	for _, call := range []string{
		`http.send({"method": "get", "url": "http://example.com"})`,
		`time.now_ns()`,
		`rand.intn("x", 10)`,
		`net.lookup_ip_addr("example.com")`,
		`opa.runtime()`,
		`uuid.rfc4122("x")`,
	} {
		name := call[:strings.Index(call, "(")]
		t.Run(name, func(t *testing.T) {
			dir := writeRules(t, map[string]string{"r.rego": regoRule("team-sandbox", "\tx := "+call+"\n\tf := {\"msg\": sprintf(\"%v\", [x]), \"impact\": 0}")})
			_, err := Load(dir)
			if err == nil {
				t.Fatal("rule calling " + name + " loaded")
			}
			for _, w := range []string{"compile rule team-sandbox", "r.rego:15", "undefined function " + name, "not allowed in the rule sandbox"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "not allowed in the rule sandbox"); n != 1 {
				t.Errorf("error %q gives the sandbox note %d times, want once", err, n)
			}
		})
	}
	t.Run("expr now", func(t *testing.T) {
		dir := writeRules(t, map[string]string{"a.yaml": strings.Replace(goodExpr, `impact: "0.01"`, `impact: "now().Unix() > 0 ? 0.01 : 0"`, 1)})
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "load rule team-many-memcpy") || !strings.Contains(err.Error(), "now") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestEvaluationTimeout(t *testing.T) {
	dir := writeRules(t, map[string]string{"slow.rego": regoRule("team-slow", `	input.gpu_idle_ratio >= 0
	n := count([1 | some i in numbers.range(1, 20000); some j in numbers.range(1, 20000); i != j])
	f := {"msg": sprintf("%d", [n]), "impact": 0}`)})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.With(Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fs, _, err := s.Evaluate(context.Background(), gpuFacts())
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("evaluation took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "evaluate rule team-slow") || !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Fatalf("got %v", err)
	}
	if len(fs) == 0 {
		t.Error("other rules' findings were dropped")
	}
}

// An expr rule's fix expression picks the doc's variant; one that is not
// a string fails at load.
func TestExprFixVariant(t *testing.T) {
	rule := func(id, fix string) string {
		return "id: " + id + "\ntitle: t\nseverity: low\ncategory: profiling-setup\nrequires: [steps_count]\n" +
			"references: [https://example.com]\nwhen: steps_count > 0\nimpact: \"0\"\nmessage: m\nfix: " + fix + "\ndoc: |\n  ```python variant=cpu\n  cpu()\n  ```\n"
	}
	dir := writeRules(t, map[string]string{"fix.yaml": rule("team-fix", `'has_gpu ? "default" : "cpu"'`)})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f    *facts.Facts
		want string
	}{
		{&facts.Facts{StepsCount: 2}, "cpu"},
		{&facts.Facts{StepsCount: 2, HasGPU: true}, "default"},
	} {
		fs, _, err := s.Evaluate(context.Background(), tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, fd := range fs {
			if fd.Rule == "team-fix" {
				got = append(got, fd.Fix)
			}
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("has_gpu %v: fix %v, want %q", tt.f.HasGPU, got, tt.want)
		}
	}
	bad := writeRules(t, map[string]string{"bad.yaml": rule("team-bad-fix", "steps_count")})
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "fix") {
		t.Errorf("a numeric fix loaded: %v", err)
	}
}

func TestMalformedFindingIsAnError(t *testing.T) {
	dir := writeRules(t, map[string]string{
		"big.rego":  regoRule("team-big", "\tf := {\"msg\": \"x\", \"impact\": 2}"),
		"typo.rego": regoRule("team-typo", "\tf := {\"msg\": \"x\", \"impcat\": 0.1}"),
	})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Evaluate(context.Background(), gpuFacts())
	for _, w := range []string{"evaluate rule team-big", "impact 2 is outside 0..1", "evaluate rule team-typo", `unknown key "impcat"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not contain %q", err, w)
		}
	}
}

func TestEvaluateConcurrent(t *testing.T) {
	s := mustBuiltin(t)
	want, _, err := s.Evaluate(context.Background(), gpuFacts())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _, err := s.Evaluate(context.Background(), gpuFacts())
			if err == nil && !reflect.DeepEqual(got, want) {
				err = fmt.Errorf("concurrent result differs")
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEvaluateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := mustBuiltin(t).Evaluate(ctx, gpuFacts()); err == nil {
		t.Fatal("canceled evaluation succeeded")
	}
	if _, _, err := mustBuiltin(t).Evaluate(context.Background(), nil); err == nil {
		t.Fatal("nil facts accepted")
	}
}

func TestBuiltinDocs(t *testing.T) {
	for _, r := range mustBuiltin(t).Rules() {
		if !strings.Contains(r.Doc, "```python") {
			t.Errorf("rule %s: doc has no python snippet", r.ID)
		}
		for _, w := range []string{"Why it matters", "How to confirm", "Impact estimate"} {
			if !strings.Contains(r.Doc, w) {
				t.Errorf("rule %s: doc lacks %q", r.ID, w)
			}
		}
		if !strings.HasPrefix(r.Source, "builtin/") {
			t.Errorf("rule %s: source %q", r.ID, r.Source)
		}
	}
}

func TestHintsOnePerCause(t *testing.T) {
	// A CPU-only trace with steps: every GPU fact is missing for one reason.
	got := hintFor([]string{"memcpy_pageable_count", "memcpy_htod_count", "memcpy_count", "memcpy_time_ratio"}, &facts.Facts{HasSteps: true})
	if got != HintCUDA {
		t.Errorf("hint %q, want %q", got, HintCUDA)
	}
}

func TestMessagesAreOneLine(t *testing.T) {
	s := mustBuiltin(t)
	for _, f := range []*facts.Facts{gpuFacts(), {SchemaVersion: 1}, {SchemaVersion: 1, HasSteps: true, StepsCount: 1}} {
		fs, _, err := s.Evaluate(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fs {
			if strings.Contains(fd.Message, "\n") {
				t.Errorf("rule %s: message has a newline: %q", fd.Rule, fd.Message)
			}
		}
	}
}

// TestNullEvidenceLeftOut: an evidence item whose value is null (a fact
// the trace could not measure, such as a per-step count without steps) is
// left out of the finding, in Rego and expr rules alike, not shown as 0.
func TestNullEvidenceLeftOut(t *testing.T) {
	dir := writeRules(t, map[string]string{
		"ev.rego": regoRule("team-ev", `	input.gpu_idle_ratio > 0.1
	f := {"msg": "idle", "impact": 0.1, "evidence": [
		{"name": "gpu_idle_ratio", "value": input.gpu_idle_ratio, "unit": "ratio"},
		{"name": "allocator_calls_per_step", "value": input.allocator_calls_per_step, "unit": "per_step"},
	]}`),
		"ev.yaml": "id: team-ev-expr\ntitle: t\nseverity: low\ncategory: host-overhead\nrequires: [gpu_idle_ratio]\n" +
			"references: [https://example.com]\nwhen: gpu_idle_ratio > 0.1\nimpact: \"0.1\"\nmessage: m\n" +
			"evidence:\n  - {name: gpu_idle_ratio, value: gpu_idle_ratio, unit: ratio}\n  - {name: allocator_calls_per_step, value: allocator_calls_per_step, unit: per_step}\n" +
			"doc: A team rule.\n",
	})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		perStep *float64
		want    []string
	}{
		{nil, []string{"gpu_idle_ratio"}},
		{f64(3), []string{"gpu_idle_ratio", "allocator_calls_per_step"}},
	} {
		f := gpuFacts()
		f.AllocatorCallsPerStep = tt.perStep
		fs, _, err := s.Evaluate(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, fd := range fs {
			if fd.Rule != "team-ev" && fd.Rule != "team-ev-expr" {
				continue
			}
			seen++
			var got []string
			for _, ev := range fd.Evidence {
				got = append(got, ev.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("%s, allocator_calls_per_step %v: evidence %v, want %v", fd.Rule, tt.perStep, got, tt.want)
			}
		}
		if seen != 2 {
			t.Errorf("allocator_calls_per_step %v: %d of the 2 team rules fired", tt.perStep, seen)
		}
	}
}
