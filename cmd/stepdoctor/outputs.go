package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/reports"
	"github.com/stepdoctor/stepdoctor/rules"
)

// input is something a command reads: a file, or a directory whose scan
// reads the files below it that match.
type input struct {
	kind string // "trace", "script", "config", "rules dir": for the error
	path string
	// match, for a directory, tells whether the scan reads the file at
	// rel (slash-separated, relative to the directory); nil for a file.
	match func(rel string) bool
}

// traceInputs are the trace paths of analyze, diff or --baseline: files,
// facts files, directories scanned recursively for *.json[.gz], or "-".
func traceInputs(paths ...string) []input {
	var in []input
	for _, p := range paths {
		in = append(in, input{kind: "trace", path: p, match: func(rel string) bool {
			return engine.IsScanName(filepath.Base(rel))
		}})
	}
	return in
}

// ruleDirInputs are --rules directories: Load reads the rule files directly
// inside each one.
func ruleDirInputs(dirs ...string) []input {
	var in []input
	for _, d := range dirs {
		in = append(in, input{kind: "rules dir", path: d, match: func(rel string) bool {
			return !strings.Contains(rel, "/") && rules.IsRuleFileName(rel)
		}})
	}
	return in
}

// checkOutput refuses an output path that is one of the inputs, or that an
// input directory's scan reads or would read, however it is spelt: through
// symlinks, "..", a hard link, or a file:// URL. Writing there would replace a trace
// (perhaps the only record of an expensive run) with the report. The error
// is a usage error (exit 2).
func checkOutput(out string, inputs []input) error {
	if out == "" || out == "-" {
		return nil
	}
	refuse := func(why string) error {
		return &exitError{2, fmt.Errorf("refuse output %s: %s", out, why)}
	}
	// A file:// URL is a local path: compared as one, on either side.
	out, _ = objstore.LocalPath(out)
	local := make([]input, len(inputs))
	for i, in := range inputs {
		local[i] = in
		local[i].path, _ = objstore.LocalPath(in.path)
	}
	inputs = local
	if objstore.IsURL(out) {
		return checkURLOutput(out, inputs, refuse)
	}
	outSt, outErr := os.Stat(out)
	// The directory the output lands in, resolved; the name is kept as
	// written since that is the entry the write creates or replaces.
	outDir, outName := filepath.Split(out)
	if outDir == "" {
		outDir = "."
	}
	realDir, dirErr := filepath.EvalSymlinks(outDir)
	if dirErr == nil {
		realDir, dirErr = filepath.Abs(realDir)
	}
	for _, in := range inputs {
		if in.path == "-" {
			// Standard input redirected from the output's file.
			if st, err := os.Stdin.Stat(); err == nil && st.Mode().IsRegular() && outErr == nil && os.SameFile(outSt, st) {
				return refuse("it is the file on standard input")
			}
			continue
		}
		st, err := os.Stat(in.path)
		if err != nil {
			continue // reading it fails with its own error
		}
		if !st.IsDir() || in.match == nil {
			if outErr == nil && os.SameFile(outSt, st) {
				return refuse(fmt.Sprintf("it is input %s %s", in.kind, in.path))
			}
			continue
		}
		if dirErr != nil {
			continue
		}
		realIn, err := filepath.EvalSymlinks(in.path)
		if err == nil {
			realIn, err = filepath.Abs(realIn)
		}
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(realIn, filepath.Join(realDir, outName))
		inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		if inside && in.match(filepath.ToSlash(rel)) {
			if outErr == nil {
				return refuse(fmt.Sprintf("it is input %s %s (read from %s)", in.kind, filepath.Join(in.path, rel), in.path))
			}
			return refuse(fmt.Sprintf("the scan of input %s %s would read it", in.kind, in.path))
		}
		// Another name for one of the files the scan reads: a hard link,
		// or a symlink onto it.
		if outErr == nil && outSt.Mode().IsRegular() {
			if f, ok := scannedSameFile(in, outSt); ok {
				return refuse(fmt.Sprintf("it is input %s %s (read from %s)", in.kind, f, in.path))
			}
		}
	}
	return nil
}

// scannedSameFile looks for the output among the files a directory input's
// scan reads.
func scannedSameFile(in input, outSt os.FileInfo) (string, bool) {
	found := ""
	_ = filepath.WalkDir(in.path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(in.path, p)
		if err != nil || !in.match(filepath.ToSlash(rel)) {
			return nil
		}
		if st, err := os.Stat(p); err == nil && os.SameFile(st, outSt) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found, found != ""
}

// checkURLOutput refuses an output URL that names an input object, or an
// object below an input prefix that the prefix's listing would read.
func checkURLOutput(out string, inputs []input, refuse func(string) error) error {
	for _, in := range inputs {
		if !objstore.IsURL(in.path) {
			continue
		}
		same, inside := objstore.Same(out, in.path)
		if same {
			return refuse(fmt.Sprintf("it is input %s %s", in.kind, in.path))
		}
		if inside && in.match != nil && in.match(path.Base(objstore.Name(out))) {
			return refuse(fmt.Sprintf("the listing of input %s %s would read it", in.kind, in.path))
		}
	}
	return nil
}

// writeOutput writes what render writes to out: a local file through a
// temporary file and a rename (reports.WriteFile), an object-storage URL in
// one upload (objstore.Store.Write). Either way the file appears whole or
// not at all.
func writeOutput(ctx context.Context, out string, render func(io.Writer) error) error {
	if !objstore.IsURL(out) {
		return reports.WriteFile(out, render)
	}
	var store objstore.Store
	defer store.Close()
	return store.Write(ctx, out, render)
}
