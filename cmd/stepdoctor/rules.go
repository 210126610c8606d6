package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/stepdoctor/stepdoctor/rules"
)

func rulesCmd(stdout io.Writer) *cobra.Command {
	var dirs []string
	c := &cobra.Command{Use: "rules", Short: "List and test rules"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the loaded rules (built-in and --rules DIR)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := rules.Load(dirs...)
			if err != nil {
				return &exitError{2, err}
			}
			for _, r := range set.Rules() {
				fmt.Fprintf(stdout, "%-22s %-7s %-18s %s\n", r.ID, r.Severity, r.Category, r.Title)
			}
			return nil
		},
	}
	list.Flags().StringArrayVar(&dirs, "rules", nil, "also load team rules from `DIR`")
	c.AddCommand(list)
	return c
}
