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
		out        string
	)
	c := &cobra.Command{
		Use:   "facts PATH...",
		Short: "Print the facts of each trace as JSON Lines (--list: the fact catalogue)",
		Long: `facts reads traces like analyze and prints one JSON object per trace and line:
"file", "schema_version", every fact of the catalogue under its name, the report
series (examples, steps, timeline, top_ops, top_kernels, labels) and "health".
This is what a rule author looks at, and what lets ranks be reduced to facts in
separate jobs and merged later (docs/scale.md). PATH and -o may be object-storage
URLs (s3://, gs://, azblob://, file://). -o writes the file whole or not at all: a
local file through a rename, an object in one upload. --list prints the catalogue
(docs/FACTS.md).`,
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
			if err := checkOutput(out, traceInputs(args...)); err != nil {
				return err
			}
			res, err := engine.Analyze(cmd.Context(), engine.Options{Paths: args, Stdin: stdin, FactsOnly: true, Facts: fcfg})
			if err != nil {
				return &exitError{2, err}
			}
			for _, sk := range res.Skipped {
				fmt.Fprintf(stderr, "skipped %s: %s\n", sk.Path, sk.Reason)
			}
			write := func(w io.Writer) error {
				for _, tr := range res.Traces {
					line, err := engine.FactsLine(tr)
					if err != nil {
						return err
					}
					if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
						return fmt.Errorf("write facts: %w", err)
					}
				}
				return nil
			}
			if out == "" || out == "-" {
				if err := write(stdout); err != nil {
					return &exitError{2, err}
				}
				return nil
			}
			if err := writeOutput(cmd.Context(), out, write); err != nil {
				return &exitError{2, fmt.Errorf("write facts: %w", err)}
			}
			return nil
		},
	}
	addConfigFlag(c, &config)
	addStepMarkerFlag(c, &stepMarker)
	c.Flags().StringVarP(&out, "output", "o", "", "write the facts to `FILE` (a local path or an s3://, gs://, azblob:// or file:// URL; .jsonl so analyze reads it) instead of stdout")
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
