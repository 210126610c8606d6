package rules

import (
	"context"
	"os"
	"path"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

// fuzzFacts is the trace a fuzzed rule is evaluated on: a training loop
// with GPU idle time, a DataLoader share and steps.
var fuzzFacts = map[string]any{
	"has_gpu": true, "has_steps": true, "steps_count": 5, "window_us": 100000,
	"gpu_idle_ratio": 0.4, "gpu_busy_ratio": 0.6,
	"step_time_us": map[string]any{"mean": 20000, "p50": 20000, "p90": 25000, "max": 30000},
}

// FuzzLoadRules loads one team rule (YAML expr rule or Rego module, chosen
// by the first byte) with a fuzzed .stepdoctor.yaml applied, and evaluates
// it: loading may fail, evaluation may fail, nothing may panic or hang.
// The shared Rego libraries are loaded too so real rules compile.
//
//	go test ./rules -run '^$' -fuzz FuzzLoadRules -fuzztime 30s -fuzzminimizetime=0
func FuzzLoadRules(f *testing.F) {
	for _, name := range []string{"../rules/examples/idle_budget.yaml", "../rules/examples/step_slo.rego",
		"builtin/dataloader_bound.rego", "builtin/profile_too_short.yaml", "builtin/gpu_activity_missing.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		kind := byte('y')
		if path.Ext(name) == ".rego" {
			kind = 'r'
		}
		f.Add(append([]byte{kind}, b...), []byte("params: {team-idle-budget: {max_idle_ratio: 0.2}}\ntimeout: 50ms\n"))
		f.Add(append([]byte{kind}, b...), []byte("disable: [dataloader-bound]\nseverity: {team-step-slo: high}\nparams: {dataloader-bound: {min_ratio: .nan}}\n"))
	}
	lib, err := fsSources(builtin.FS, ".", "builtin")
	if err != nil {
		f.Fatal(err)
	}
	var libs []source
	for _, s := range lib {
		if s.path == "builtin/lib.rego" || s.path == "builtin/script_lib.rego" {
			libs = append(libs, s)
		}
	}
	in, err := CaseFacts(fuzzFacts)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rule, config []byte) {
		if len(rule) == 0 {
			return
		}
		name := "team/rule.yaml"
		if rule[0] == 'r' {
			name = "team/rule.rego"
		}
		s, err := loadSources(append(append([]source(nil), libs...), source{path: name, data: rule[1:]}))
		if err != nil {
			return
		}
		fc, err := ParseConfig(config)
		if err != nil {
			return
		}
		cfg := fc.RuleConfig()
		if cfg.Timeout <= 0 || cfg.Timeout > 100*time.Millisecond {
			cfg.Timeout = 100 * time.Millisecond
		}
		if s, err = s.With(cfg); err != nil {
			return
		}
		fs, _, _ := s.Evaluate(context.Background(), in)
		for _, fd := range fs {
			if fd.Impact < 0 || fd.Impact > 1 || fd.Impact != fd.Impact {
				t.Errorf("rule %s: impact %v out of 0..1", fd.Rule, fd.Impact)
			}
		}
	})
}
