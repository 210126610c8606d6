// Package engine runs the stepdoctor pipeline: read traces, derive facts,
// evaluate rules, rank findings. Renderers in package reports consume the
// Result; cmd/stepdoctor only wires flags to Options.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/rules"
)

// Options configures Analyze.
type Options struct {
	// Paths are trace files (.json, .json.gz), directories as written by
	// torch.profiler.tensorboard_trace_handler, or "-" for stdin.
	Paths []string
	// Rules is the rule set to evaluate (rules.Load); nil means the
	// built-in pack.
	Rules *rules.Set
	// Facts holds fact thresholds; the zero value means facts.DefaultConfig.
	Facts facts.Config
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
	// Progress, when set, is called from reading goroutines with the bytes
	// read so far over all inputs and their total size on disk (compressed
	// bytes for .gz; stdin is not counted).
	Progress func(read, total int64)
	// MemoryBudget bounds the estimated memory of traces read at once, in
	// bytes; 0 means half the machine's available memory. Files are read in
	// parallel, one per core, while their estimates fit the budget.
	MemoryBudget int64
}

// InputError marks a problem with the user's input (missing file, not a
// trace, unreadable JSON): the CLI exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Analyze reads every trace, derives its facts and evaluates the rules.
// Files are read in parallel, one per core; the Result keeps input order.
func Analyze(ctx context.Context, opts Options) (*Result, error) {
	files, err := ExpandPaths(opts.Paths)
	if err != nil {
		return nil, &InputError{err}
	}
	set := opts.Rules
	if set == nil {
		if set, err = rules.Builtin(); err != nil {
			return nil, fmt.Errorf("load built-in rules: %w", err)
		}
	}
	cfg := opts.Facts
	if cfg == (facts.Config{}) {
		cfg = facts.DefaultConfig()
	}
	stdin := opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	res := &Result{SchemaVersion: ResultSchemaVersion, Traces: make([]*TraceResult, len(files))}
	errs := make([]error, len(files))
	prog := newProgress(files, opts.Progress)
	budget := opts.MemoryBudget
	if budget <= 0 {
		budget = defaultBudget()
	}
	mem := semaphore.NewWeighted(budget)
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, path := range files {
		w := min(estimateMemory(path), budget)
		if err := mem.Acquire(ctx, w); err != nil {
			errs[i] = err
			break
		}
		cores <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-cores; mem.Release(w) }()
			res.Traces[i], errs[i] = analyzeOne(ctx, path, stdin, cfg, set, prog)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

func analyzeOne(ctx context.Context, path string, stdin io.Reader, cfg facts.Config, set *rules.Set, prog *progress) (*TraceResult, error) {
	t, err := readTrace(path, stdin, prog)
	if err != nil {
		return nil, &InputError{err}
	}
	f := facts.Derive(t, cfg)
	findings, skipped, err := set.Evaluate(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("evaluate rules on %s: %w", path, err)
	}
	return &TraceResult{
		Input:        Input{Path: path, Bytes: t.Bytes, Compressed: t.Gzip},
		Facts:        f,
		Findings:     findings,
		NotEvaluated: skipped,
		Health:       t.Health,
	}, nil
}

// ReadTrace opens and parses one trace file ("-" reads stdin).
func ReadTrace(path string, stdin io.Reader) (*trace.Trace, error) {
	return readTrace(path, stdin, nil)
}

func readTrace(path string, stdin io.Reader, prog *progress) (*trace.Trace, error) {
	if path == "-" {
		return trace.Parse(stdin, "<stdin>")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if prog != nil {
		r = &countingReader{r: f, p: prog}
	}
	return trace.Parse(r, path)
}

// ExpandPaths turns the command-line paths into trace files: files as
// given, directories to their *.json and *.json.gz entries (not recursive,
// sorted by name), "-" kept for stdin.
func ExpandPaths(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no trace given: pass a trace file, a directory of traces, or - for stdin")
	}
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("open trace: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("read trace directory: %w", err)
		}
		var found []string
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")) {
				found = append(found, filepath.Join(p, n))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("read trace directory %s: no *.json or *.json.gz traces in it", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
