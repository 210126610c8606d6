// Package engine runs the stepdoctor pipeline: read traces, derive facts,
// evaluate rules, rank findings. Renderers in package reports consume the
// Result; cmd/stepdoctor only wires flags to Options.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/rules"
)

// Options configures Analyze.
type Options struct {
	// Paths are trace files (.json, .json.gz), facts files (.jsonl),
	// directories as written by torch.profiler.tensorboard_trace_handler
	// (or directories of facts files), "-" for stdin, or the same as
	// object-storage URLs: s3://, gs://, azblob:// or file:// naming an
	// object or a prefix listed like a directory (internal/objstore).
	Paths []string
	// Rules is the rule set to evaluate (rules.Load); nil means LoadRules,
	// or the built-in pack when that is nil too.
	Rules *rules.Set
	// LoadRules, when Rules is nil, compiles the rule set to evaluate.
	// Analyze calls it once, on its own goroutine beside the reading of the
	// traces: compiling the Rego rules takes about 80 ms for the built-in
	// pack, time a spare core hides behind the parse. Its error ends
	// Analyze as it is (the reading is cancelled).
	LoadRules func() (*rules.Set, error)
	// FactsOnly skips rule evaluation: TraceResults carry facts and health
	// only (stepdoctor facts).
	FactsOnly bool
	// Facts holds fact thresholds; zero fields take facts.DefaultConfig's.
	Facts facts.Config
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
	// Progress, when set, is called from reading goroutines with the bytes
	// read so far over all inputs and their total size on disk (compressed
	// bytes for .gz; stdin is not counted).
	Progress func(read, total int64)
	// Loaded, when set, is called from reading goroutines once per input,
	// after it was read and its facts derived (stepdoctor -v).
	Loaded func(FileTiming)
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
	store := &objstore.Store{}
	defer store.Close()
	files, scanSkipped, err := expand(ctx, store, opts.Paths)
	if err != nil {
		return nil, &InputError{err}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	compiled := compileRules(opts, cancel)
	cfg := opts.Facts.WithDefaults()
	stdin := opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	loaded := make([][]*TraceResult, len(files))
	errs := make([]error, len(files))
	prog := newProgress(files, opts.Progress)
	budget := opts.MemoryBudget
	if budget <= 0 {
		budget = defaultBudget()
	}
	mem := semaphore.NewWeighted(budget)
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	read := make(chan struct{})
	go func() {
		defer close(read)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i, in := range files {
			w := min(estimateMemory(in), budget)
			if err := mem.Acquire(ctx, w); err != nil {
				errs[i] = err
				return
			}
			select {
			case cores <- struct{}{}:
			case <-ctx.Done():
				mem.Release(w)
				errs[i] = context.Cause(ctx)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-cores; mem.Release(w) }()
				var ft FileTiming
				loaded[i], errs[i] = load(ctx, store, in.path, stdin, cfg, prog, &ft)
				if opts.Loaded != nil && errs[i] == nil {
					opts.Loaded(ft)
				}
			}()
		}
	}()
	select {
	case <-read:
	case <-ctx.Done():
		if _, err := compiled(); err != nil {
			// The rules failed: that is the error now, not once the
			// reading, which stops at its next look at ctx (or, blocked
			// on a pipe, with its input), is done.
			return nil, err
		}
		<-read
	}
	set, err := compiled()
	if err != nil {
		return nil, err
	}
	res := &Result{SchemaVersion: ResultSchemaVersion, Skipped: scanSkipped}
	for i := range files {
		if errs[i] != nil && skippable(files[i], errs[i]) {
			res.Skipped = append(res.Skipped, Skipped{Path: files[i].path, Reason: errs[i].Error()})
			errs[i] = nil
			continue
		}
		res.Traces = append(res.Traces, loaded[i]...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(res.Traces) == 0 {
		return nil, &InputError{fmt.Errorf("read traces: no Kineto trace among %d files (%d skipped)", len(files)+len(scanSkipped), len(res.Skipped))}
	}
	if ranks, note := assignRanks(res.Traces); ranks {
		crossRank(res.Traces)
	} else if note != "" {
		res.Notes = append(res.Notes, note)
	}
	if set != nil {
		// The traces are evaluated in parallel, one per core (a job of a
		// thousand ranks merged from facts files spends most of its time
		// here); errors are listed in input order.
		evalErrs := make([]error, len(res.Traces))
		work := make(chan int)
		var ewg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), len(res.Traces)) {
			ewg.Add(1)
			go func() {
				defer ewg.Done()
				for i := range work {
					tr := res.Traces[i]
					tr.Findings, tr.NotEvaluated, evalErrs[i] = set.Evaluate(ctx, tr.Facts)
				}
			}()
		}
		for i := range res.Traces {
			work <- i
		}
		close(work)
		ewg.Wait()
		for i, tr := range res.Traces {
			if err := evalErrs[i]; err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("evaluate rules on %s: %w", tr.Input.Path, err)
				}
				// A failing rule (a team rule timing out) does not sink the
				// report: the other rules' findings stand, the failure is listed.
				res.RuleErrors = append(res.RuleErrors, ruleErrors(tr.Input.Path, err)...)
			}
		}
	}
	return res, nil
}

// compileRules starts compiling the rule set of opts beside the reading and
// returns the wait for it: the set (nil when FactsOnly) or the load error,
// which also cancels the reading.
func compileRules(opts Options, cancel context.CancelCauseFunc) func() (*rules.Set, error) {
	if opts.FactsOnly {
		return func() (*rules.Set, error) { return nil, nil }
	}
	if opts.Rules != nil {
		return func() (*rules.Set, error) { return opts.Rules, nil }
	}
	load := opts.LoadRules
	if load == nil {
		load = func() (*rules.Set, error) {
			set, err := rules.Builtin()
			if err != nil {
				return nil, fmt.Errorf("load built-in rules: %w", err)
			}
			return set, nil
		}
	}
	var set *rules.Set
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if set, err = load(); err != nil {
			cancel(err)
		}
	}()
	return func() (*rules.Set, error) {
		<-done
		return set, err
	}
}

// ruleErrors splits the joined error of rules.Set.Evaluate into one entry
// per failing rule, each message on one line.
func ruleErrors(path string, err error) []RuleError {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out := make([]RuleError, 0, len(list))
	for _, e := range list {
		var re *rules.RuleError
		if errors.As(e, &re) {
			out = append(out, RuleError{Trace: path, Rule: re.Rule, Source: re.Source, Message: oneLine(re.Err.Error())})
		} else {
			out = append(out, RuleError{Trace: path, Message: oneLine(e.Error())})
		}
	}
	return out
}

// FileTiming is how long one input took: reading (and parsing) it and
// deriving its facts.
type FileTiming struct {
	Path   string
	Bytes  int64 // uncompressed JSON bytes read (0 for facts files)
	Read   time.Duration
	Derive time.Duration
}

// load reads one input: a facts file (several traces) or a trace, and
// fills ft.
func load(ctx context.Context, store *objstore.Store, path string, stdin io.Reader, cfg facts.Config, prog *progress, ft *FileTiming) ([]*TraceResult, error) {
	start := time.Now()
	ft.Path = path
	if IsFactsFile(path) {
		trs, err := readFactsFile(ctx, store, path, stdin)
		ft.Read = time.Since(start)
		if err != nil {
			return nil, &InputError{err}
		}
		return trs, nil
	}
	t, err := readTrace(ctx, store, path, stdin, prog)
	ft.Read = time.Since(start)
	if err != nil {
		return nil, &InputError{err}
	}
	ft.Bytes = t.Bytes
	f := facts.Derive(t, cfg)
	ft.Derive = time.Since(start) - ft.Read
	health := t.Health
	health.Diagnostics = append(append([]trace.Diagnostic(nil), health.Diagnostics...), f.Diagnostics...)
	health.Diagnostics = append(health.Diagnostics, crossChecks(&t.Health, f)...)
	return []*TraceResult{{
		Input:  Input{Path: path, Bytes: t.Bytes, Compressed: t.Gzip},
		Facts:  f,
		Health: health,
	}}, nil
}

// readTrace opens and parses one trace file ("-" reads stdin, a URL is
// streamed from its store).
func readTrace(ctx context.Context, store *objstore.Store, path string, stdin io.Reader, prog *progress) (*trace.Trace, error) {
	if path == "-" {
		return trace.ParseContext(ctx, stdin, "<stdin>")
	}
	f, err := openInput(ctx, store, path)
	if err != nil {
		return nil, fmt.Errorf("open trace%s: %w", urlName(path), err)
	}
	defer f.Close()
	var r io.Reader = f
	if prog != nil {
		r = &countingReader{r: f, p: prog}
	}
	return trace.ParseContext(ctx, r, path)
}

// sizedReader is an open input that tells its size.
type sizedReader interface {
	io.ReadCloser
	Size() int64
}

// localFile is an *os.File with the Size the trace reader asks for.
type localFile struct{ *os.File }

func (f localFile) Size() int64 {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// urlName is " URL" for a URL, whose store's errors name only the key,
// and "" for a local path, whose errors name it.
func urlName(path string) string {
	if objstore.IsURL(path) {
		return " " + path
	}
	return ""
}

// openInput opens a local file, or streams an object-storage URL.
func openInput(ctx context.Context, store *objstore.Store, path string) (sizedReader, error) {
	if objstore.IsURL(path) {
		return store.Open(ctx, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return localFile{f}, nil
}

// ExpandPaths turns the command-line paths into trace files: files as
// given, directories to every *.json and *.json.gz below them (sorted by
// path; a directory with none of those to its *.jsonl facts files), "-"
// kept for stdin (at most once), URLs of objects as given and URL
// prefixes listed like directories.
func ExpandPaths(paths []string) ([]string, error) {
	store := &objstore.Store{}
	defer store.Close()
	files, _, err := expand(context.Background(), store, paths)
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, err
}

// IsTraceName reports whether a directory scan reads a file of this name
// as a trace: *.json and *.json.gz.
func IsTraceName(name string) bool {
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz")
}

// IsScanName reports whether a directory scan may read a file of this
// name: a trace, or a facts file when the directory holds no trace.
func IsScanName(name string) bool { return IsTraceName(name) || IsFactsFile(name) }

// inputFile is one file Analyze reads.
type inputFile struct {
	path    string
	size    int64 // bytes on disk or in the store; -1 when unknown (stdin)
	fromDir bool  // found by a directory or prefix scan
}

// scanNames picks, from a directory's file names, what it reads: its
// traces, else its facts files (the reduce step of docs/scale.md reads a
// prefix of facts files). A directory holding both reads the traces only,
// so no trace is counted twice.
func scanNames(names []string) (keep []bool, any bool) {
	keep = make([]bool, len(names))
	for pass, match := range []func(string) bool{IsTraceName, IsFactsFile} {
		for i, n := range names {
			if match(n) {
				keep[i], any = true, true
			}
		}
		if any || pass == 1 {
			break
		}
	}
	return keep, any
}

func expand(ctx context.Context, store *objstore.Store, paths []string) (files []inputFile, skipped []Skipped, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no trace given: pass a trace file, a directory of traces, or - for stdin")
	}
	stdin := false
	for _, p := range paths {
		if p == "-" {
			if stdin {
				return nil, nil, errors.New("parse paths: - (stdin) given more than once")
			}
			stdin = true
			files = append(files, inputFile{path: p, size: -1})
			continue
		}
		if objstore.IsURL(p) {
			found, err := expandURL(ctx, store, p)
			if err != nil {
				return nil, nil, err
			}
			files = append(files, found...)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("open trace: %w", err)
		}
		if !st.IsDir() {
			files = append(files, inputFile{path: p, size: st.Size()})
			continue
		}
		found, skips, err := scanDir(p, nil, IsScanName)
		if err != nil {
			return nil, nil, fmt.Errorf("read trace directory: %w", err)
		}
		skipped = append(skipped, skips...)
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = filepath.Base(f)
		}
		keep, any := scanNames(names)
		if !any {
			return nil, nil, fmt.Errorf("read trace directory %s: no *.json or *.json.gz traces (or *.jsonl facts files) in it", p)
		}
		var dir []inputFile
		for i, f := range found {
			if keep[i] {
				size := int64(-1)
				if st, err := os.Stat(f); err == nil {
					size = st.Size()
				}
				dir = append(dir, inputFile{path: f, size: size, fromDir: true})
			}
		}
		sort.Slice(dir, func(i, j int) bool { return dir[i].path < dir[j].path })
		files = append(files, dir...)
	}
	return files, skipped, nil
}

// expandURL resolves one URL: the object it names, else the prefix below
// it, listed like a directory (the same file names as scanDir reads).
func expandURL(ctx context.Context, store *objstore.Store, p string) ([]inputFile, error) {
	obj, ok, err := store.Stat(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	if ok {
		return []inputFile{{path: p, size: obj.Size}}, nil
	}
	found, err := store.List(ctx, p, IsScanName)
	if err != nil {
		return nil, fmt.Errorf("read trace prefix: %w", err)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("open trace %s: no such object, and no *.json, *.json.gz or *.jsonl objects below it", p)
	}
	names := make([]string, len(found))
	for i, o := range found {
		names[i] = path.Base(o.Key)
	}
	keep, _ := scanNames(names)
	var out []inputFile
	for i, o := range found {
		if keep[i] {
			out = append(out, inputFile{path: o.URL, size: o.Size, fromDir: true})
		}
	}
	return out, nil
}

// crossChecks warns when damage and facts together mean the numbers are
// biased: Kineto writes CPU events before GPU activities, so a file cut
// short loses GPU events first.
func crossChecks(h *trace.Health, f *facts.Facts) []trace.Diagnostic {
	truncated := false
	for _, d := range h.Diagnostics {
		truncated = truncated || d.Reason == "truncated"
	}
	if !truncated {
		return nil
	}
	switch {
	case f.GPUActivityMissing:
		return []trace.Diagnostic{{Kind: trace.DiagWarning, Reason: "gpu_events_lost", Offset: -1, Count: 1,
			Message: "the file was cut before its GPU events (Kineto writes them after the CPU events): GPU facts are missing, this is not a CPU-only trace"}}
	case f.OrphanLaunchRatio != nil && *f.OrphanLaunchRatio > 0.05:
		return []trace.Diagnostic{{Kind: trace.DiagWarning, Reason: "gpu_events_lost", Offset: -1, Count: 1,
			Message: fmt.Sprintf("the file was cut inside its GPU events: %.0f%% of kernel launches have no GPU activity, so GPU busy time and kernel counts are too low", 100**f.OrphanLaunchRatio)}}
	}
	return nil
}

// skippable reports whether f's read error skips f instead of failing
// the run. Inside a directory, a JSON file that is not a trace (an
// Execution Trace, a config, a file with no events) is skipped and listed
// in the report. Named files fail; so does a file named as
// tensorboard_trace_handler names a rank's trace (*.pt.trace.json), and
// any file that could not be read (permission, an I/O error) or changed
// while it was read: a rank must not drop out of a job's report unnoticed.
func skippable(f inputFile, err error) bool {
	var ie *InputError
	var pe *fs.PathError
	return f.fromDir && errors.As(err, &ie) && !handlerTraceName(f.path) &&
		!errors.Is(err, trace.ErrChanged) && !errors.As(err, &pe)
}

// handlerTraceName reports whether a file is named as
// torch.profiler.tensorboard_trace_handler names a rank's trace
// (worker.time.pt.trace.json, optionally .gz).
func handlerTraceName(path string) bool {
	base := strings.ToLower(path[strings.LastIndexAny(path, "/\\")+1:])
	return strings.HasSuffix(base, ".pt.trace.json") || strings.HasSuffix(base, ".pt.trace.json.gz")
}
