package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/rules"
)

// configHelp is the --config flag's help, the same for every subcommand.
const configHelp = "team configuration `FILE` (default: ./.stepdoctor.yaml when present): disable rules, severities, params, rule dirs, fact thresholds"

// addConfigFlag adds --config to a subcommand.
func addConfigFlag(c *cobra.Command, path *string) {
	c.Flags().StringVar(path, "config", "", configHelp)
}

// addRulesFlag adds --rules DIR (repeatable): team rule directories on
// top of the configuration's.
func addRulesFlag(c *cobra.Command, dirs *[]string) {
	c.Flags().StringArrayVar(dirs, "rules", nil, "load team rules (*.rego, *.yaml) from `DIR` as well (repeatable)")
}

// teamConfig is the team configuration as every subcommand applies it:
// the file given with --config, else .stepdoctor.yaml in the current
// directory when there is one (file nil: none).
type teamConfig struct{ file *rules.FileConfig }

// loadConfig is the one configuration loader of the CLI.
func loadConfig(path string) (teamConfig, error) {
	if path == "" {
		p, err := rules.FindConfig(".")
		if err != nil || p == "" {
			return teamConfig{}, err
		}
		path = p
	}
	f, err := rules.LoadConfigFile(path)
	if err != nil {
		return teamConfig{}, err
	}
	return teamConfig{f}, nil
}

// rules loads the built-in pack, the configuration's rule directories and
// dirs, with the configuration applied.
func (c teamConfig) rules(dirs []string) (*rules.Set, error) {
	// Compiling the Rego rules makes many small objects while the heap is
	// still a few MB, so the collector would run every few hundred KB: a
	// third of the load time went to it. A higher target while they
	// compile halves that for about 5 MB more memory.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	return rules.LoadConfigured(c.file, dirs...)
}

// failOnRuleError is the configuration's fail_on_rule_error.
func (c teamConfig) failOnRuleError() bool { return c.file != nil && c.file.FailOnRuleError }

// ruleErrorHelp is the --fail-on-rule-error flag's help.
const ruleErrorHelp = "exit 1 when a rule fails or times out (config: fail_on_rule_error: true); without it such a rule is a warning and a report entry"

// ruleFailure is the exit-1 error for failed rules, or nil when none
// failed or neither the flag nor the configuration asks.
func ruleFailure(asked bool, failed []string) error {
	if !asked || len(failed) == 0 {
		return nil
	}
	return &exitError{1, fmt.Errorf("%d rule evaluation(s) failed and --fail-on-rule-error is set; first: %s", len(failed), failed[0])}
}

// facts returns the fact thresholds: the facts: section over the defaults.
func (c teamConfig) facts() facts.Config { return c.file.FactsConfig() }

// stepMarkerHelp is the --step-marker flag's help, the same for analyze,
// facts and diff.
const stepMarkerHelp = "mark the steps of a trace without ProfilerStep#N: `REGEX` names the host span of one iteration " +
	"(record_function label, operator or python_function frame), auto picks the engine's own spans (vLLM execute, SGLang step[...], HF generate); " +
	"overrides the facts: step_marker key"

// addStepMarkerFlag adds --step-marker to a subcommand.
func addStepMarkerFlag(c *cobra.Command, marker *string) {
	c.Flags().StringVar(marker, "step-marker", "", stepMarkerHelp)
}

// factsWith returns the fact thresholds with --step-marker applied over
// the configuration's step_marker, refusing an invalid expression.
func (c teamConfig) factsWith(marker string) (facts.Config, error) {
	fc := c.facts()
	if marker != "" {
		fc.StepMarker = marker
	}
	if err := facts.CheckStepMarker(fc.StepMarker); err != nil {
		return fc, fmt.Errorf("--step-marker: %w", err)
	}
	return fc, nil
}

// loadRules loads the configuration at configPath (or ./.stepdoctor.yaml)
// and the rules it configures.
func loadRules(configPath string, dirs []string) (*rules.Set, teamConfig, error) {
	cfg, err := loadConfig(configPath)
	if err != nil {
		return nil, cfg, err
	}
	set, err := cfg.rules(dirs)
	return set, cfg, err
}
