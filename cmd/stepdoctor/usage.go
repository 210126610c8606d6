package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() {
	cobra.AddTemplateFunc("flagUsages", flagUsages)
}

// flagUsages is pflag's flag table without the "[=true|false]" it appends
// to boolean flags (--help[=true|false]): a boolean flag is given bare. The
// column stays aligned.
func flagUsages(fs *pflag.FlagSet) string {
	const noise = "[=true|false]"
	return strings.ReplaceAll(fs.FlagUsages(), noise, strings.Repeat(" ", len(noise)))
}

// cleanUsage makes root and every subcommand print flags with flagUsages.
func cleanUsage(root *cobra.Command) {
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, ".LocalFlags.FlagUsages", "flagUsages .LocalFlags")
	t = strings.ReplaceAll(t, ".InheritedFlags.FlagUsages", "flagUsages .InheritedFlags")
	root.SetUsageTemplate(t)
}

// needArgs checks the positional arguments: at least len(names), at most
// max (-1: any number). A missing one is a one-line error naming it, what
// it can be (hint) and the usage line, instead of cobra's "requires at
// least 1 arg(s), only received 0".
func needArgs(names []string, max int, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			msg := fmt.Sprintf("%s: missing %s", cmd.Name(), strings.Join(names[len(args):], " and "))
			if hint != "" {
				msg += " (" + hint + ")"
			}
			return fmt.Errorf("%s; usage: %s", msg, cmd.UseLine())
		case max >= 0 && len(args) > max:
			return fmt.Errorf("%s: %d arguments given, %s takes %d; usage: %s", cmd.Name(), len(args), cmd.Name(), max, cmd.UseLine())
		}
		return nil
	}
}
