// Package tracetest builds small Kineto traces for tests and for the
// project's own sample traces in testdata/. Times are microseconds, written
// with nanosecond (3-decimal) precision as recent Kineto versions do.
package tracetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Builder accumulates events for one trace. The zero value is not usable;
// call New.
type Builder struct {
	events []map[string]any
	corr   int64
	extID  int64
	top    map[string]any

	// Pid and Tid of host events; GPU events use Device and Stream.
	Pid, Tid       int
	Device, Stream int
}

// New returns a builder for a single-GPU trace: host pid 100, tid 1, GPU 0
// stream 7, an A100 in deviceProperties.
func New() *Builder {
	return &Builder{
		Pid: 100, Tid: 1, Device: 0, Stream: 7,
		top: map[string]any{
			"schemaVersion": 1,
			"deviceProperties": []any{map[string]any{
				"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920,
				"computeMajor": 8, "computeMinor": 0, "numSms": 108,
			}},
		},
	}
}

// Top sets a top-level key (for example distributedInfo); nil deletes it.
func (b *Builder) Top(key string, v any) *Builder {
	if v == nil {
		delete(b.top, key)
	} else {
		b.top[key] = v
	}
	return b
}

// Raw appends an event object as given.
func (b *Builder) Raw(ev map[string]any) *Builder {
	b.events = append(b.events, ev)
	return b
}

func us(v float64) json.Number { return json.Number(fmt.Sprintf("%.3f", v)) }

// X appends a host complete event of category cat.
func (b *Builder) X(cat, name string, ts, dur float64) *Builder {
	b.extID++
	return b.Raw(map[string]any{"ph": "X", "cat": cat, "name": name, "pid": b.Pid, "tid": b.Tid,
		"ts": us(ts), "dur": us(dur), "args": map[string]any{"External id": b.extID}})
}

// Step appends ProfilerStep#n as a user_annotation.
func (b *Builder) Step(n int, ts, dur float64) *Builder {
	return b.X("user_annotation", fmt.Sprintf("ProfilerStep#%d", n), ts, dur)
}

// Op appends a cpu_op.
func (b *Builder) Op(name string, ts, dur float64) *Builder { return b.X("cpu_op", name, ts, dur) }

// Runtime appends a cuda_runtime call with the next correlation id and
// returns that id.
func (b *Builder) Runtime(name string, ts, dur float64) int64 {
	b.corr++
	b.Raw(map[string]any{"ph": "X", "cat": "cuda_runtime", "name": name, "pid": b.Pid, "tid": b.Tid,
		"ts": us(ts), "dur": us(dur), "args": map[string]any{"correlation": b.corr, "cbid": 211}})
	return b.corr
}

// GPU appends a device event (cat kernel, gpu_memcpy or gpu_memset) linked
// to correlation id corr (0 for none).
func (b *Builder) GPU(cat, name string, ts, dur float64, corr int64, args map[string]any) *Builder {
	a := map[string]any{"device": b.Device, "stream": b.Stream}
	if corr != 0 {
		a["correlation"] = corr
	}
	for k, v := range args {
		a[k] = v
	}
	return b.Raw(map[string]any{"ph": "X", "cat": cat, "name": name, "pid": b.Device, "tid": b.Stream,
		"ts": us(ts), "dur": us(dur), "args": a})
}

// Launch appends cudaLaunchKernel at ts (lasting launchDur) and the kernel
// it launches at kts lasting kdur.
func (b *Builder) Launch(ts, launchDur float64, kernel string, kts, kdur float64) *Builder {
	c := b.Runtime("cudaLaunchKernel", ts, launchDur)
	return b.GPU("kernel", kernel, kts, kdur, c, nil)
}

// Memcpy appends cudaMemcpyAsync at ts and the copy on the GPU. kind is
// "HtoD", "DtoH" or "DtoD"; pageable marks a pageable host buffer.
func (b *Builder) Memcpy(ts float64, kind string, pageable bool, kts, kdur float64, bytes int) *Builder {
	c := b.Runtime("cudaMemcpyAsync", ts, 5)
	src, dst := "Pinned", "Device"
	if pageable {
		src = "Pageable"
	}
	if kind == "DtoH" {
		src, dst = "Device", "Pinned"
		if pageable {
			dst = "Pageable"
		}
	}
	if kind == "DtoD" {
		src, dst = "Device", "Device"
	}
	name := fmt.Sprintf("Memcpy %s (%s -> %s)", kind, src, dst)
	return b.GPU("gpu_memcpy", name, kts, kdur, c, map[string]any{"bytes": bytes})
}

// JSON renders the trace as Kineto writes it: an object with traceEvents,
// keys sorted, one event per line.
func (b *Builder) JSON() []byte {
	var buf bytes.Buffer
	keys := make([]string, 0, len(b.top))
	for k := range b.top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf.WriteString("{\n")
	for _, k := range keys {
		v, _ := json.Marshal(b.top[k])
		fmt.Fprintf(&buf, "  %q: %s,\n", k, v)
	}
	buf.WriteString("  \"traceEvents\": [\n")
	for i, ev := range b.events {
		v, _ := json.Marshal(ev)
		buf.WriteString("    ")
		buf.Write(v)
		if i+1 < len(b.events) {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ]\n}\n")
	return buf.Bytes()
}
