package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// ConfigFileName is the team configuration file stepdoctor looks for in
// the current directory when --config is not given.
const ConfigFileName = ".stepdoctor.yaml"

// FileConfig is a parsed .stepdoctor.yaml:
//
//	# rules this team does not want to see
//	disable: [memory-headroom]
//	# severities replacing the rules' own (and their findings')
//	severity:
//	  pageable-memcpy: high
//	# threshold overrides: rule id -> param -> value (same kind as the default)
//	params:
//	  dataloader-bound: {min_ratio: 0.1}
//	# rule directories loaded beside the built-in pack, relative to this file
//	rules: [team-rules]
//	# per-rule evaluation timeout (Go duration, at most MaxTimeout: 30s)
//	timeout: 2s
//	# exit 1 when a rule fails or times out (as --fail-on-rule-error)
//	fail_on_rule_error: true
//	# fact thresholds (facts.Config's yaml names); keys left out keep
//	# their defaults
//	facts:
//	  short_kernel_ns: 5000
//
// Unknown keys are errors, so a misspelled key never silently does nothing.
type FileConfig struct {
	Disable  []string                  `yaml:"disable"`
	Severity map[string]Severity       `yaml:"severity"`
	Params   map[string]map[string]any `yaml:"params"`
	Rules    []string                  `yaml:"rules"`
	Timeout  string                    `yaml:"timeout"`
	// FailOnRuleError makes a rule that fails or times out exit 1, as
	// --fail-on-rule-error does.
	FailOnRuleError bool `yaml:"fail_on_rule_error"`
	// FactsSection is the facts: section as written; FactsConfig merges it
	// over facts.DefaultConfig.
	FactsSection yaml.Node `yaml:"facts"`

	facts facts.Config // FactsSection decoded over the defaults (ParseConfig)

	// Path is the file the config was read from ("" for none).
	Path string `yaml:"-"`
}

// LoadConfigFile reads and checks a .stepdoctor.yaml. Rule directories
// are made relative to the file's directory.
func LoadConfigFile(path string) (*FileConfig, error) {
	b, err := readFileCapped(path)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("parse config %s: %w", path, err)
	}
	c.Path = path
	for i, d := range c.Rules {
		if strings.TrimSpace(d) == "" {
			return nil, fmt.Errorf("parse config %s: rules: entry %d is empty; name a directory of rule files", path, i+1)
		}
		if !filepath.IsAbs(d) {
			c.Rules[i] = filepath.Join(filepath.Dir(path), d)
		}
	}
	return c, nil
}

// ParseConfig parses .stepdoctor.yaml bytes (rule directories as written).
func ParseConfig(b []byte) (*FileConfig, error) {
	c := &FileConfig{}
	if len(bytes.TrimSpace(b)) == 0 {
		return c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		// yaml names the Go type ("field x not found in type
		// rules.FileConfig"); the user wrote a key.
		return nil, errors.New(strings.ReplaceAll(err.Error(), " in type rules.FileConfig", " (not a configuration key)"))
	}
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 || d > MaxTimeout {
			return nil, fmt.Errorf("timeout %q: want a positive Go duration of at most %v, such as 2s", c.Timeout, MaxTimeout)
		}
	}
	fc, err := parseFactsSection(&c.FactsSection)
	if err != nil {
		return nil, err
	}
	c.facts = fc
	return c, nil
}

// parseFactsSection decodes the facts: section over facts.DefaultConfig,
// field by field: a key left out keeps its default. Unknown keys and
// values that are not positive are errors.
func parseFactsSection(n *yaml.Node) (facts.Config, error) {
	cfg := facts.DefaultConfig()
	if n.Kind == 0 {
		return cfg, nil
	}
	if n.Kind != yaml.MappingNode {
		return cfg, fmt.Errorf("facts: want a mapping of thresholds such as short_kernel_ns: 5000")
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return cfg, fmt.Errorf("facts: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("facts: %w", err)
	}
	if err := facts.CheckStepMarker(cfg.StepMarker); err != nil {
		return cfg, fmt.Errorf("facts: step_marker: %w", err)
	}
	v := reflect.ValueOf(cfg)
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == key && !positive(v.Field(i)) {
				return cfg, fmt.Errorf("facts: %s: want a positive number, got %s", key, n.Content[k+1].Value)
			}
		}
	}
	return cfg, nil
}

func positive(v reflect.Value) bool {
	switch {
	case v.CanInt():
		return v.Int() > 0
	case v.CanFloat():
		return v.Float() > 0
	}
	return true
}

// FactsConfig returns the fact thresholds: the facts: section merged over
// facts.DefaultConfig (the defaults for a nil config).
func (c *FileConfig) FactsConfig() facts.Config {
	if c == nil {
		return facts.DefaultConfig()
	}
	return c.facts.WithDefaults()
}

// FindConfig returns the path of .stepdoctor.yaml in dir, or "" when
// there is none.
func FindConfig(dir string) (string, error) {
	p := filepath.Join(dir, ConfigFileName)
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("find config %s: %w", p, err)
	case st.IsDir():
		return "", fmt.Errorf("find config %s: is a directory", p)
	}
	return p, nil
}

// RuleConfig converts the file to the Config Set.With applies.
func (c *FileConfig) RuleConfig() Config {
	cfg := Config{Disable: c.Disable, Severity: c.Severity}
	if len(c.Params) > 0 {
		cfg.Params = Params{}
		for id, ps := range c.Params {
			cfg.Params[id] = ps
		}
	}
	if c.Timeout != "" {
		cfg.Timeout, _ = time.ParseDuration(c.Timeout) // checked by ParseConfig
	}
	return cfg
}

// LoadConfigured loads the built-in pack, the config's rule directories and
// dirs, then applies the config. A nil config loads the rules unchanged.
// Errors name the config file.
func LoadConfigured(c *FileConfig, dirs ...string) (*Set, error) {
	if c == nil {
		return Load(dirs...)
	}
	all := append(append([]string(nil), c.Rules...), dirs...)
	s, err := Load(all...)
	if err != nil {
		return nil, err
	}
	s, err = s.With(c.RuleConfig())
	if err != nil {
		return nil, fmt.Errorf("load config %s: %w", c.Path, err)
	}
	return s, nil
}
