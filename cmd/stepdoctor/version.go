package main

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/version"
	"github.com/stepdoctor/stepdoctor/rules"
)

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(stdout, version.Read().Long())
			return err
		},
	}
}

// argvKey carries the command line (without the program name) through the
// context, for the reports' About.
type argvKey struct{}

func withArgv(ctx context.Context, args []string) context.Context {
	return context.WithValue(ctx, argvKey{}, append([]string(nil), args...))
}

// about says what made a report: the version, the command line as given
// and the rule pack (the built-in digest, team rule dirs, configuration).
func about(ctx context.Context, cfg teamConfig, ruleDirs []string) *engine.About {
	args, _ := ctx.Value(argvKey{}).([]string)
	a := &engine.About{
		Version:  version.String(),
		Command:  commandLine(args),
		RulePack: "builtin " + rules.BuiltinDigest(),
		RuleDirs: []string{},
	}
	if root, err := filepath.Abs(engine.SourceRoot()); err == nil {
		a.SourceRoot = root
	}
	if cfg.file != nil {
		a.Config = cfg.file.Path
		a.RuleDirs = append(a.RuleDirs, cfg.file.Rules...)
	}
	if dirs := rules.UniqueDirs(append(a.RuleDirs, ruleDirs...)); dirs != nil {
		a.RuleDirs = dirs // as read: a directory named twice once
	}
	return a
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// commandLine is "stepdoctor" and args, each quoted the way a POSIX shell
// would need it, so the line can be pasted back.
func commandLine(args []string) string {
	parts := []string{"stepdoctor"}
	for _, a := range args {
		if shellSafe.MatchString(a) {
			parts = append(parts, a)
		} else {
			parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
	}
	return strings.Join(parts, " ")
}

// setVersion gives root --version (no -v shorthand: analyze's -v is
// verbose), printing what `stepdoctor version` prints.
func setVersion(root *cobra.Command) {
	in := version.Read()
	root.Version = in.Short()
	root.SetVersionTemplate(strings.ReplaceAll(in.Long(), "{{", "{ {"))
	root.Flags().Bool("version", false, "print the version, VCS revision and Go version")
}
