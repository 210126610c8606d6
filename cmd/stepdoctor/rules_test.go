package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/rules"
)

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestRulesDoc keeps docs/RULES.md equal to the catalogue generated from
// the built-in rules' metadata; -update rewrites it.
func TestRulesDoc(t *testing.T) {
	set, err := rules.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeCatalogue(&buf, set.Rules())
	path := filepath.Join("..", "..", "docs", "RULES.md")
	if updating() {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./cmd/stepdoctor -run TestRulesDoc -update)", path, err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%s is stale: run go test ./cmd/stepdoctor -run TestRulesDoc -update and review the diff", path)
	}
	// Every rule is in the table and has its section.
	for _, r := range set.Rules() {
		if !strings.Contains(buf.String(), "| [`"+r.ID+"`](#"+r.ID+")") || !strings.Contains(buf.String(), "\n### "+r.ID+"\n") {
			t.Errorf("rule %s missing from the catalogue", r.ID)
		}
	}
	// rules doc prints the same catalogue.
	code, stdout, stderr := runCLI(t, "rules", "doc")
	if code != 0 || stdout != buf.String() {
		t.Errorf("rules doc: exit %d, stderr %q, output differs from the catalogue: %v", code, stderr, stdout != buf.String())
	}
}

func TestRulesShow(t *testing.T) {
	code, stdout, _ := runCLI(t, "rules", "show", "launch-bound")
	if code != 0 || !strings.Contains(stdout, "# launch-bound") || !strings.Contains(stdout, "torch.compile") || !strings.Contains(stdout, "`min_kernels` = 50") {
		t.Errorf("rules show launch-bound: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, "rules", "show", "no-such-rule"); code != 2 || !strings.Contains(stderr, "no-such-rule") {
		t.Errorf("rules show no-such-rule: exit %d, stderr %q", code, stderr)
	}
}

// TestRulesTest runs `rules test` like `opa test`: the built-in pack, the
// example team directory, a directory with a failing case and a failing
// Rego test, and a rule that calls http.send.
func TestRulesTest(t *testing.T) {
	code, stdout, stderr := runCLI(t, "rules", "test")
	if code != 0 || !strings.Contains(stdout, "PASS: builtin/cases/launch-bound.yaml:") || strings.Contains(stdout, "FAIL") {
		t.Fatalf("rules test: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	examples := filepath.Join("..", "..", "rules", "examples")
	code, stdout, stderr = runCLI(t, "rules", "test", examples)
	if code != 0 || !strings.Contains(stdout, "test_slow_median_fires") || !strings.Contains(stdout, "team-idle-budget: idle over budget") || strings.Contains(stdout, "WARN") {
		t.Fatalf("rules test examples: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	// The examples without their case files: the Rego test still covers
	// team-step-slo; team-idle-budget is named as untested.
	bare := t.TempDir()
	for _, f := range []string{"idle_budget.yaml", "step_slo.rego", "step_slo_test.rego"} {
		b, err := os.ReadFile(filepath.Join(examples, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bare, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ = runCLI(t, "rules", "test", bare)
	if code != 0 || !strings.Contains(stdout, "WARN: team-idle-budget (") || !strings.Contains(stdout, "has no case and no Rego test") || strings.Contains(stdout, "WARN: team-step-slo") {
		t.Errorf("rules test without cases: exit %d\n%s", code, stdout)
	}

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "cases"), 0o755)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("busy.yaml", `id: team-busy
title: GPU busy
severity: info
category: kernel-efficiency
requires: [gpu_busy_ratio]
when: gpu_busy_ratio > 0.5
impact: "0"
message: busy {{ pct(gpu_busy_ratio) }}
doc: An example.
references: [https://example.com/busy]
`)
	write("cases/team-busy.yaml", `rule: team-busy
cases:
  - name: busy fires
    facts: {has_gpu: true, gpu_busy_ratio: 0.9}
    expect: fires
  - name: wrong expectation
    facts: {has_gpu: true, gpu_busy_ratio: 0.9}
    expect: quiet
`)
	write("busy_test.rego", `package team_busy_test

import rego.v1

test_true if { 1 == 1 }

test_false if { 1 == 2 }
`)
	code, stdout, _ = runCLI(t, "rules", "test", dir)
	for _, want := range []string{"PASS: ", "busy fires", "FAIL: ", "wrong expectation", "got fires", "test_true", "test_false", "PASS: 2/4", "FAIL: 2/4"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("rules test with failures: output lacks %q:\n%s", want, stdout)
		}
	}
	if code != 1 {
		t.Errorf("rules test with failures: exit %d, want 1", code)
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "exfil.rego"), []byte(`# METADATA
# title: Exfiltrate
# description: Calls out.
# custom:
#   id: team-exfil
#   severity: low
#   category: profiling-setup
#   requires: [window_us]
#   references: [https://example.com]
package stepdoctor.rules.team_exfil

import rego.v1

finding contains f if {
	http.send({"method": "GET", "url": "https://example.com"})
	f := {"msg": "x", "impact": 0}
}
`), 0o644)
	code, _, stderr = runCLI(t, "rules", "test", bad)
	if code != 2 || !strings.Contains(stderr, "http.send") || !strings.Contains(stderr, "sandbox") {
		t.Errorf("rule calling http.send: exit %d, stderr %q; want 2 and a sandbox error", code, stderr)
	}
}

// TestConfigFile: .stepdoctor.yaml disables rules, pins severities,
// overrides params and adds rule directories; errors name the file.
func TestConfigFile(t *testing.T) {
	sample, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "traces", "dataloader_bound.pt.trace.json"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	os.WriteFile(cfg, []byte(`disable: [host-sync-in-step, amp-not-used]
severity: {dataloader-bound: low}
params: {gpu-underutilized: {min_untraced_ratio: 0.9}}
`), 0o644)
	code, stdout, stderr := runCLI(t, "analyze", "--format", "json", "--config", cfg, sample)
	if code != 0 {
		t.Fatalf("analyze --config: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, `"rule": "host-sync-in-step"`) || strings.Contains(stdout, `"rule": "gpu-underutilized"`) {
		t.Errorf("disabled or raised rules still fire:\n%s", stdout)
	}
	if !strings.Contains(stdout, `"rule": "dataloader-bound"`) {
		t.Errorf("dataloader-bound missing")
	}
	if code, _, _ := runCLI(t, "analyze", "--fail-on", "medium", "--config", cfg, sample); code != 0 {
		t.Errorf("dataloader-bound pinned to low still trips --fail-on medium (exit %d)", code)
	}

	// Found in the current directory; rules: adds the example team rules.
	examples, _ := filepath.Abs(filepath.Join("..", "..", "rules", "examples"))
	t.Chdir(examples)
	code, stdout, stderr = runCLI(t, "rules", "list")
	if code != 0 || !strings.Contains(stdout, "team-step-slo") || strings.Contains(stdout, "memory-headroom") {
		t.Errorf("rules list with ./.stepdoctor.yaml: exit %d, stderr %q\n%s", code, stderr, stdout)
	}

	for _, tt := range []struct{ text, want string }{
		{"disabel: [launch-bound]\n", "field disabel not found (not a configuration key)"},
		{"disable: [no-such-rule]\n", "disable rule no-such-rule: no such rule"},
		{"params: {launch-bound: {min_kernels: lots}}\n", "want a number, got a string"},
		{"timeout: soon\n", `timeout "soon"`},
	} {
		bad := filepath.Join(dir, "bad.yaml")
		os.WriteFile(bad, []byte(tt.text), 0o644)
		code, _, stderr := runCLI(t, "analyze", "--config", bad, sample)
		if code != 2 || !strings.Contains(stderr, bad) || !strings.Contains(stderr, tt.want) {
			t.Errorf("config %q: exit %d, stderr %q; want 2 naming %s and %q", tt.text, code, stderr, bad, tt.want)
		}
	}
}

// TestDiagnosisOnSharedTraces checks every row of
// ../shared/traces/DIAGNOSIS.md, the expert reading of the shared traces:
// the first finding names the real bottleneck (and its culprit where the
// row names one), and none of the row's wrong readings appears at medium
// severity or more. It also checks the pack's invariants: impacts of the
// idle-time rules never add up to more than the idle time, severity
// follows impact, windows without steps are not called step time, and
// evidence holds no booleans.
func TestDiagnosisOnSharedTraces(t *testing.T) {
	dir := factstest.SharedTraces(t)
	analyze := func(name string) (map[string]any, []traceFinding) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "analyze", "--format", "json", filepath.Join(dir, name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var doc struct {
			Traces []struct {
				Facts    map[string]any `json:"facts"`
				Findings []traceFinding `json:"findings"`
			} `json:"traces"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Traces) != 1 {
			t.Fatalf("%s: decode: %v", name, err)
		}
		return doc.Traces[0].Facts, doc.Traces[0].Findings
	}
	const dlrm = "param/dlrm_kineto/"
	rows := []struct {
		name  string
		top   []string // the first finding is one of these rules ...
		names []string // ... and its message names these culprits
		wrong []string // rules that must not fire at medium or more
		also  string   // a rule that must fire (anywhere)
	}{
		{"hta/negative_queue_length_values_check/rank0.json.gz", []string{"idle-gap-queued"}, []string{"cudaMemcpyAsync", "Device -> Pageable", "sparse_data_dist"}, []string{"launch-bound", "idle-gap-launch"}, ""},
		{"hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", nil, nil, []string{"step-time-variance", "launch-bound", "idle-gap-launch", "gpu-underutilized", "idle-gap-queued"}, ""},
		{"hta/nccl_parser_config/nccl_data.json.gz", []string{"idle-gap-launch", "launch-bound"}, []string{"CPU operators", "aten::"}, []string{"gpu-underutilized"}, ""},
		{"hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", []string{"warmup-in-window"}, []string{"cudaDeviceGetStreamPriorityRange", "cudaFree"}, []string{"pageable-memcpy", "host-sync-in-step", "idle-gap-sync", "launch-bound", "idle-gap-launch"}, ""},
		{"hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", []string{"warmup-in-window"}, []string{"hipLaunchKernel"}, []string{"gpu-underutilized", "launch-bound", "idle-gap-launch"}, ""},
		{"hta/df_index_resolver/df_index_resolver.json.gz", []string{"launch-bound", "unbucketed-allreduce"}, nil, nil, "unbucketed-allreduce"},
		{"hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", []string{"cpu-collectives"}, []string{"gloo:all_reduce"}, []string{"step-time-variance"}, ""},
		{"hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz", []string{"launch-bound"}, nil, nil, ""},
		{"hta/mtia_inference_trace/mtia_inference_rank_0.json.gz", []string{"accelerator-unsupported"}, []string{"MTIA"}, []string{"gpu-activity-missing"}, ""},
		{"kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz", []string{"dataloader-bound"}, []string{"single-process"}, nil, ""},
		{"kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.pt.trace.json.gz", []string{"launch-bound", "idle-gap-launch"}, nil, []string{"dataloader-bound", "idle-gap-dataloader"}, ""},
		{"tracelens/tests/traces/b200/eager_trace.json.gz", []string{"launch-bound"}, nil, nil, ""},
		{"tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", []string{"launch-bound"}, nil, []string{"optimizer-foreach", "optimizer-zero-grad", "dataloader-bound"}, ""},
		{"tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", []string{"launch-bound"}, nil, []string{"optimizer-foreach", "optimizer-zero-grad", "dataloader-bound"}, ""},
		{"tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", []string{"idle-gap-queued"}, []string{"hipMemcpyWithStream"}, []string{"idle-gap-launch", "launch-bound"}, ""},
		{"tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", nil, nil, []string{"gpu-underutilized", "launch-bound", "idle-gap-launch", "idle-gap-queued"}, ""},
		{"tracelens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz", []string{"allocator-churn"}, []string{"hipFree", "1348 calls"}, []string{"idle-gap-launch"}, ""},
	}
	rows = append(rows, struct {
		name  string
		top   []string
		names []string
		wrong []string
		also  string
	}{dlrm + "worker0_step_12.1694128201545.pt.trace.json", []string{"exposed-communication"}, []string{"40.1%"}, []string{"amp-not-used"}, ""})
	for _, tt := range rows {
		facts, fs := analyze(tt.name)
		var got []string
		for _, f := range fs {
			got = append(got, f.Rule)
		}
		if len(tt.top) > 0 && (len(fs) == 0 || !slices.Contains(tt.top, fs[0].Rule)) {
			t.Errorf("%s: findings %v, want the first among %v", tt.name, got, tt.top)
		} else if len(tt.top) > 0 {
			for _, n := range tt.names {
				if !strings.Contains(fs[0].Message, n) {
					t.Errorf("%s: first finding does not name %q: %s", tt.name, n, fs[0].Message)
				}
			}
		}
		if tt.also != "" && !slices.Contains(got, tt.also) {
			t.Errorf("%s: findings %v, want %s among them", tt.name, got, tt.also)
		}
		for _, f := range fs {
			if slices.Contains(tt.wrong, f.Rule) && (f.Severity == "medium" || f.Severity == "high") {
				t.Errorf("%s: wrong reading %s at %s: %s", tt.name, f.Rule, f.Severity, f.Message)
			}
			if strings.Contains(f.Message, "ProfilerActivity.CUDA") && facts["unsupported_accelerator"] != nil {
				t.Errorf("%s: %s asks for CUDA activity on a non-CUDA accelerator", tt.name, f.Rule)
			}
		}
		checkInvariants(t, tt.name, facts, fs)
	}
}

// TestDiagnosisDLRMRanks checks DIAGNOSIS.md's row for the 8 DLRM ranks
// read together: communication-bound (exposed communication is the first
// finding on most ranks), rank 7 the straggler, and no AMP finding at
// medium or more (matmul kernels are 1.4-2.5% of the window).
func TestDiagnosisDLRMRanks(t *testing.T) {
	dir := filepath.Join(factstest.SharedTraces(t), "param", "dlrm_kineto")
	code, stdout, stderr := runCLI(t, "analyze", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Traces []struct {
			Facts    map[string]any `json:"facts"`
			Findings []traceFinding `json:"findings"`
		} `json:"traces"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Traces) != 8 {
		t.Fatalf("decode: %v (%d traces)", err, len(doc.Traces))
	}
	comm, straggler := 0, -1.0
	for _, tr := range doc.Traces {
		if len(tr.Findings) > 0 && tr.Findings[0].Rule == "exposed-communication" {
			comm++
		}
		for _, f := range tr.Findings {
			if f.Rule == "straggler-rank" {
				straggler, _ = tr.Facts["rank"].(float64)
			}
			if f.Rule == "amp-not-used" && (f.Severity == "medium" || f.Severity == "high") {
				t.Errorf("rank %v: amp-not-used at %s: %s", tr.Facts["rank"], f.Severity, f.Message)
			}
		}
		checkInvariants(t, "dlrm", tr.Facts, tr.Findings)
	}
	if comm < 5 {
		t.Errorf("exposed-communication is first on %d of 8 ranks, want most", comm)
	}
	if straggler != 7 {
		t.Errorf("straggler-rank fired on rank %v, want 7", straggler)
	}
}

// idleRules are the rules whose impacts are shares of the GPU idle time.
var idleRules = map[string]bool{
	"dataloader-bound": true, "idle-gap-dataloader": true, "host-sync-in-step": true, "idle-gap-sync": true,
	"launch-bound": true, "idle-gap-launch": true, "repeated-small-op": true, "optimizer-foreach": true,
	"optimizer-zero-grad": true, "gpu-underutilized": true, "idle-gap-queued": true, "warmup-in-window": true,
	"allocator-churn": true,
}

// traceFinding is the part of a JSON report finding the checks read.
type traceFinding struct {
	Rule     string  `json:"rule"`
	Severity string  `json:"severity"`
	Impact   float64 `json:"impact"`
	Message  string  `json:"message"`
	Evidence []struct {
		Name string `json:"name"`
		Unit string `json:"unit"`
	} `json:"evidence"`
}

func checkInvariants(t *testing.T, name string, facts map[string]any, fs []traceFinding) {
	t.Helper()
	idle, hasGPU := facts["gpu_idle_ratio"].(float64)
	steps, _ := facts["steps_count"].(float64)
	sum := 0.0
	for _, f := range fs {
		if idleRules[f.Rule] {
			sum += f.Impact
		}
		if f.Impact > 0 && f.Impact < 0.02 && (f.Severity == "medium" || f.Severity == "high") && !strings.HasPrefix(f.Rule, "team-") {
			t.Errorf("%s: %s is %s with impact %.4f", name, f.Rule, f.Severity, f.Impact)
		}
		if steps == 0 && strings.Contains(f.Message, "of step time") {
			t.Errorf("%s: %s says step time without steps: %s", name, f.Rule, f.Message)
		}
		for _, ev := range f.Evidence {
			if ev.Unit == "bool" {
				t.Errorf("%s: %s has boolean evidence %s", name, f.Rule, ev.Name)
			}
		}
	}
	if hasGPU && sum > idle+1e-6 {
		t.Errorf("%s: idle-time rules claim %.4f, more than the GPU idle ratio %.4f", name, sum, idle)
	}
	total, worst := 0.0, 0
	for i, f := range fs {
		total += f.Impact
		r := slices.Index([]string{"high", "medium", "low", "info"}, f.Severity)
		if i > 0 && r < worst {
			t.Errorf("%s: %s (%s) ranks below a %s finding", name, f.Rule, f.Severity, fs[i-1].Severity)
		}
		worst = max(worst, r)
	}
	if total > 1+1e-6 {
		t.Errorf("%s: impacts add up to %.4f, more than the window", name, total)
	}
}

// failWriter fails every write, like stdout redirected to /dev/full.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestRulesWriteErrors: every rules subcommand reports a failed write
// with exit 2; they used to ignore it and exit 0.
func TestRulesWriteErrors(t *testing.T) {
	for _, args := range [][]string{
		{"rules", "list"},
		{"rules", "show", "dataloader-bound"},
		{"rules", "doc"},
		{"rules", "test"},
		{"rules", "test", filepath.Join("..", "..", "rules", "examples")},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), failWriter{}, &errb)
		if code != 2 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the write error", args, code, errb.String())
		}
	}
}

// TestFailingTeamRuleWarnsOnStderr: a team rule that fails leaves the
// other findings and exit 0, and says so in one stderr line.
func TestFailingTeamRuleWarnsOnStderr(t *testing.T) {
	dir := t.TempDir()
	rule := `id: team-bomb
title: Bomb
severity: low
category: host-overhead
requires: [steps_count]
when: steps_count >= 0
impact: 'len(replace(repeat("a", 1e5), "a", repeat("a", 1e5))) > 0 ? 0.01 : 0'
message: "boom"
doc: A rule that builds too much.
references: [https://pytorch.org/docs/stable/profiler.html]
`
	if err := os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "analyze", "--rules", dir, "-o", filepath.Join(t.TempDir(), "r.json"), "../../testdata/traces/dataloader_bound.pt.trace.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var warned []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "warning: ") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "dataloader_bound.pt.trace.json: evaluate rule team-bomb") || !strings.Contains(warned[0], "replace would build more than") {
		t.Errorf("stderr warnings %q: want one line naming the trace, the rule and the budget", warned)
	}
}

// TestManyRanksHTMLSize: the 8-rank DLRM report stays under 420 KB (per
// rank: its findings, breakdown, top kernels and operators; every fact is
// in the JSON report). It was 400 KB until the rule docs gained their fix
// variants for GPUs below compute capability 7.0, CPU jobs and inference
// (about 6 KB of this report, each doc printed once), then 410 KB until
// launch-bound gained the variant for steps full of host syncs (1 KB) and
// each rank's findings their notes on syncs and late peers.
func TestManyRanksHTMLSize(t *testing.T) {
	dir := filepath.Join(factstest.SharedTraces(t), "param", "dlrm_kineto")
	out := filepath.Join(t.TempDir(), "ranks.html")
	if code, _, stderr := runCLI(t, "analyze", "-q", "-o", out, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 420_000 {
		t.Errorf("8-rank HTML is %d bytes, want under 420 KB", len(b))
	}
	if s := string(b); !strings.Contains(s, "straggler") || strings.Count(s, "<th>Kernel</th>") != 8 {
		t.Errorf("8-rank HTML lost the straggler mark or a rank's kernel table")
	}
}

// rules list keeps a team rule's terminal escapes off the terminal, as
// analyze and rules show do (the title set the window title and cleared
// the screen).
func TestRulesListEscapesTitle(t *testing.T) {
	dir := t.TempDir()
	rule := "id: team-ansi\ntitle: \"a \\e]0;pwned\\a\\e[2J t\"\nseverity: high\ncategory: kernel-efficiency\nrequires: [has_gpu]\nwhen: \"true\"\nimpact: \"0\"\nmessage: m\ndoc: d\nreferences: [\"https://x.example/\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "rules", "list", "--rules", dir)
	if code != 0 || !strings.Contains(stdout, "team-ansi") {
		t.Fatalf("rules list: exit %d, stderr %q", code, stderr)
	}
	if strings.ContainsAny(stdout, "\x1b\x07") {
		t.Errorf("rules list wrote control characters: %q", stdout)
	}
}

// A file name with a terminal escape or a newline reaches neither stderr
// nor a report's footer raw: the error line and the HTML command line
// drop the control characters.
func TestControlCharsInFileNames(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "analyze", filepath.Join(dir, "nope\x1b]0;pwned\a.json"))
	if code != 2 || strings.ContainsAny(stderr, "\x1b\a") || !strings.Contains(stderr, "pwned") {
		t.Errorf("missing file: exit %d, stderr %q; want 2 and no control characters", code, stderr)
	}
	src, err := os.ReadFile("../../testdata/traces/dataloader_bound.pt.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "a\nb\x1b[2J.json")
	if err := os.WriteFile(name, src, 0o644); err != nil {
		t.Skipf("no such file name here: %v", err)
	}
	out := filepath.Join(dir, "r.html")
	if code, _, stderr := runCLI(t, "analyze", "-q", "-o", out, name); code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "\x1b") {
		t.Errorf("the HTML report carries a raw escape character")
	}
}
