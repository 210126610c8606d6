package engine

// About says what made a report: the command line and the rule pack. The
// CLI sets it on a Result, DiffResult or LintResult; renderers print it
// in every report format, and print only the build's version
// (internal/version) when it is nil.
type About struct {
	// Version is the build's version (internal/version.String()); ""
	// leaves it to the renderer, which asks internal/version itself.
	Version string `json:"version"`
	// Command is the command line as given, arguments quoted where a shell
	// would need it and paths as typed ("stepdoctor analyze -o r.md log/").
	Command string `json:"command"`
	// RulePack identifies the built-in rules: "builtin sha256:<12 hex>", a
	// digest of the embedded rule and case files.
	RulePack string `json:"rule_pack"`
	// RuleDirs are the team rule directories (config rules: then --rules),
	// as given.
	RuleDirs []string `json:"rule_dirs"`
	// Config is the team configuration file applied, "" when none.
	Config string `json:"config,omitempty"`
	// Annotated is the annotated trace analyze --annotate writes, as
	// given; "" when none.
	Annotated string `json:"annotated,omitempty"`
	// SourceRoot is the absolute directory SARIF URIs are relative to
	// (%SRCROOT%): the repository root, else the working directory; ""
	// keeps relative paths as given.
	SourceRoot string `json:"-"`
}

// SourceRoot is the directory SARIF paths are made relative to: the
// nearest directory at or above the working directory holding .git, else
// the working directory (as for lint).
func SourceRoot() string { return repoRoot() }
