package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
)

func factsCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var (
		list       bool
		config     string
		stepMarker string
	)
	c := &cobra.Command{
		Use:   "facts PATH...",
		Short: "Print the facts of each trace as JSON Lines (--list: the fact catalogue)",
		Long: `facts reads traces like analyze and prints one JSON object per trace and line:
"file", "schema_version", every fact of the catalogue under its name, the report
series (examples, steps, timeline, top_ops, top_kernels, labels) and "health".
This is what a rule author looks at, and what lets ranks be reduced to facts in
separate jobs and merged later. --list prints the catalogue (docs/FACTS.md).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return printCatalogue(stdout)
			}
			if len(args) == 0 {
				return &exitError{2, fmt.Errorf("parse arguments: facts needs at least one trace (or --list)")}
			}
			cfg, err := loadConfig(config)
			if err != nil {
				return &exitError{2, err}
			}
			fcfg, err := cfg.factsWith(stepMarker)
			if err != nil {
				return &exitError{2, err}
			}
			res, err := engine.Analyze(cmd.Context(), engine.Options{Paths: args, Stdin: stdin, FactsOnly: true, Facts: fcfg})
			if err != nil {
				return &exitError{2, err}
			}
			for _, sk := range res.Skipped {
				fmt.Fprintf(stderr, "skipped %s: %s\n", sk.Path, sk.Reason)
			}
			for _, tr := range res.Traces {
				line, err := engine.FactsLine(tr)
				if err != nil {
					return &exitError{2, err}
				}
				if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
					return &exitError{2, fmt.Errorf("write facts: %w", err)}
				}
			}
			return nil
		},
	}
	addConfigFlag(c, &config)
	addStepMarkerFlag(c, &stepMarker)
	c.Flags().BoolVar(&list, "list", false, "print the fact catalogue: name, unit, definition, source, needs")
	return c
}

func printCatalogue(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "FACT\tUNIT\tNEEDS\tDEFINITION")
	for _, d := range facts.Catalogue {
		needs := d.NeedsText()
		if needs == "" {
			needs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s)\n", d.Name, d.Unit, needs, d.Definition, d.Source)
	}
	return tw.Flush()
}
