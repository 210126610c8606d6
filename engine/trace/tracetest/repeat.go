package tracetest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Repeat writes a large trace built from a real one: the source's events
// repeated with timestamps shifted by the source's span (plus 1 ms) each
// time, correlation, External id and flow ids offset by the span of the
// source's ids so links stay unique and ids run on as in one long
// recording, and ProfilerStep numbers continued, until at least target bytes are
// written. It returns the bytes written. The source may be gzip.
//
// It is a benchmark and test helper: it decodes the source with
// encoding/json, so the source must fit in memory.
func Repeat(dst io.Writer, src io.Reader, target int64) (int64, error) {
	top, events, err := decodeSource(src)
	if err != nil {
		return 0, fmt.Errorf("read source trace: %w", err)
	}
	lo, hi, idStride, steps := span(events)
	shift := new(big.Rat).SetInt64(hi - lo + 1_000_000) // ns
	w := &countWriter{w: bufio.NewWriterSize(dst, 1<<20)}
	w.WriteString("{")
	for _, k := range sortedKeys(top) {
		fmt.Fprintf(w, "%q: %s,\n", k, top[k])
	}
	w.WriteString("\"traceEvents\": [\n")
	first := true
	for rep := int64(0); first || w.n < target; rep++ {
		for _, ev := range events {
			if !first {
				w.WriteString(",\n")
			}
			first = false
			if err := writeShifted(w, ev, rep, shift, idStride, steps); err != nil {
				return w.n, err
			}
		}
	}
	w.WriteString("\n]}\n")
	if err := w.w.Flush(); err != nil {
		return w.n, err
	}
	return w.n, w.err
}

type countWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

func (c *countWriter) WriteString(s string) { c.Write([]byte(s)) }

func decodeSource(src io.Reader) (map[string]json.RawMessage, []map[string]any, error) {
	br := bufio.NewReader(src)
	if m, _ := br.Peek(2); len(m) == 2 && m[0] == 0x1f && m[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		br = bufio.NewReader(zr)
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, nil, err
	}
	var events []map[string]any
	top := map[string]json.RawMessage{}
	dec := func(b []byte, v any) error {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		return d.Decode(v)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		err = dec(data, &events)
	} else if err = dec(data, &top); err == nil {
		err = dec(top["traceEvents"], &events)
		delete(top, "traceEvents")
	}
	return top, events, err
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func nsOf(v any) (int64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(1000, 1))
	f, _ := r.Float64()
	return int64(f), true
}

var stepRe = regexp.MustCompile(`^ProfilerStep#(\d+)$`)

// span returns the source's time span, the stride that moves its positive
// ids past themselves (max - min + 1), and its step count.
func span(events []map[string]any) (lo, hi, idStride int64, steps int64) {
	first := true
	var minID, maxID int64
	for _, ev := range events {
		ts, ok := nsOf(ev["ts"])
		if !ok {
			continue
		}
		dur, _ := nsOf(ev["dur"])
		if first || ts < lo {
			lo = ts
		}
		if first || ts+dur > hi {
			hi = ts + dur
		}
		first = false
		if a, ok := ev["args"].(map[string]any); ok {
			for _, k := range []string{"correlation", "External id", "external id"} {
				if n, ok := a[k].(json.Number); ok {
					if v, err := n.Int64(); err == nil && v > 0 {
						if minID == 0 || v < minID {
							minID = v
						}
						maxID = max(maxID, v)
					}
				}
			}
		}
		if name, ok := ev["name"].(string); ok {
			if m := stepRe.FindStringSubmatch(name); m != nil {
				if n, _ := strconv.ParseInt(m[1], 10, 64); n+1 > steps {
					steps = n + 1
				}
			}
		}
	}
	return lo, hi, max(maxID-minID+1, 1), steps
}

func writeShifted(w io.Writer, ev map[string]any, rep int64, shift *big.Rat, idStride, steps int64) error {
	if rep == 0 {
		return encode(w, ev)
	}
	out := make(map[string]any, len(ev))
	for k, v := range ev {
		out[k] = v
	}
	if ts, ok := ev["ts"]; ok {
		if s, ok := numText(ts); ok {
			if r, ok := new(big.Rat).SetString(s); ok {
				r.Add(r, new(big.Rat).Mul(new(big.Rat).SetInt64(rep), new(big.Rat).Quo(shift, big.NewRat(1000, 1))))
				out["ts"] = json.Number(r.FloatString(3))
			}
		}
	}
	if id, ok := ev["id"].(json.Number); ok {
		if v, err := id.Int64(); err == nil {
			out["id"] = v + rep*idStride
		}
	}
	if a, ok := ev["args"].(map[string]any); ok {
		na := make(map[string]any, len(a))
		for k, v := range a {
			na[k] = v
			if k == "correlation" || k == "External id" || k == "external id" {
				if n, ok := v.(json.Number); ok {
					if x, err := n.Int64(); err == nil && x > 0 {
						na[k] = x + rep*idStride
					}
				}
			}
		}
		out["args"] = na
	}
	if name, ok := ev["name"].(string); ok && steps > 0 {
		if m := stepRe.FindStringSubmatch(name); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			out["name"] = "ProfilerStep#" + strconv.FormatInt(n+rep*steps, 10)
		}
	}
	return encode(w, out)
}

// encode writes v as one JSON line, keeping <, > and & as they are, as
// the profiler writes them (kernel names are full of template brackets).
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func numText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case string:
		return x, strings.TrimSpace(x) != ""
	}
	return "", false
}
