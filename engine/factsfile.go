package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
)

// Facts files
//
// `stepdoctor facts` writes one JSON object per trace and line (JSON
// Lines): every catalogue fact at the top level, the report series, and
// "file", "input" and "health". Analyze accepts such files (*.jsonl) in
// place of traces, so ranks can be reduced to facts in separate jobs and
// merged on one machine: the report equals the one made from the traces.

// IsFactsFile reports whether path names a facts file (JSON Lines).
func IsFactsFile(path string) bool { return strings.HasSuffix(objstore.Name(path), ".jsonl") }

// FactsLine renders one trace's facts as a JSON Lines record (sorted keys,
// no newline).
func FactsLine(tr *TraceResult) ([]byte, error) {
	b, err := json.Marshal(tr.Facts)
	if err != nil {
		return nil, fmt.Errorf("encode facts of %s: %w", tr.Input.Path, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode facts of %s: %w", tr.Input.Path, err)
	}
	for k, v := range map[string]any{"file": tr.Input.Path, "input": tr.Input, "health": tr.Health} {
		if m[k], err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("encode facts of %s: %w", tr.Input.Path, err)
		}
	}
	return json.Marshal(m)
}

// factsLine is the part of a facts line that is not a fact.
type factsLine struct {
	File   string        `json:"file"`
	Input  *Input        `json:"input"`
	Health *trace.Health `json:"health"`
}

// MaxFactsLine is the longest facts line read (bytes). A line holds one
// trace's facts: 0.1-0.3 MB for the shared traces, about 220 bytes a
// ProfilerStep; decoding takes about 20 times the line in memory, so a
// facts file, as untrusted as a trace, cannot ask for gigabytes.
const MaxFactsLine = 16 << 20

// readFactsFile loads every line of a facts file as a TraceResult (facts
// and health; findings are evaluated afterwards). Errors name the file and
// line.
func readFactsFile(ctx context.Context, store *objstore.Store, path string, stdin io.Reader) ([]*TraceResult, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := openInput(ctx, store, path)
		if err != nil {
			return nil, fmt.Errorf("open facts file%s: %w", urlName(path), err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), MaxFactsLine)
	var out []*TraceResult
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(strings.TrimSpace(string(text))) == 0 {
			continue
		}
		var meta factsLine
		f := &facts.Facts{}
		if err := json.Unmarshal(text, &meta); err != nil {
			return nil, fmt.Errorf("read facts file %s line %d: %w", path, line, err)
		}
		if err := json.Unmarshal(text, f); err != nil {
			return nil, fmt.Errorf("read facts file %s line %d: %w", path, line, err)
		}
		if f.SchemaVersion != facts.SchemaVersion {
			return nil, fmt.Errorf("read facts file %s line %d: schema_version %d, this stepdoctor reads %d", path, line, f.SchemaVersion, facts.SchemaVersion)
		}
		if meta.File == "" || meta.Health == nil {
			return nil, fmt.Errorf("read facts file %s line %d: not a stepdoctor facts line (no file or health)", path, line)
		}
		if err := checkFactRanges(text); err != nil {
			return nil, fmt.Errorf("read facts file %s line %d: %w", path, line, err)
		}
		if len(f.Steps) > 0 && f.StepsCount != len(f.Steps) {
			return nil, fmt.Errorf("read facts file %s line %d: steps_count %d, but %d steps listed (facts.Derive lists every step)", path, line, f.StepsCount, len(f.Steps))
		}
		tr := &TraceResult{Input: Input{Path: meta.File}, Facts: f, Health: *meta.Health}
		if meta.Input != nil {
			tr.Input = *meta.Input
		}
		if tr.Facts.Examples == nil {
			tr.Facts.Examples = map[string][]facts.EventRef{}
		}
		out = append(out, tr)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("read facts file %s: a line over %d MiB (a facts line of a real trace is 0.1-0.3 MB; 16 MiB is about 70,000 steps)", path, MaxFactsLine>>20)
		}
		return nil, fmt.Errorf("read facts file %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read facts file %s: no facts lines", path)
	}
	return out, nil
}
