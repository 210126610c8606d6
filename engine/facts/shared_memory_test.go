package facts_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/facts/factstest"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// deriveShared derives the facts of a trace under ../shared/traces
// (skipping, saying so, when the folder is absent).
func deriveShared(t *testing.T, name string) *facts.Facts {
	t.Helper()
	dir := factstest.SharedTraces(t)
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Parse(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return facts.Derive(tr, facts.DefaultConfig())
}

// Real traces with [memory] events of the 2022+ format: the peak, the
// reserved memory and the operator at it were computed independently
// (the largest Total Allocated of the device's events, and the innermost
// cpu_op enclosing that event on its thread); the curve is downsampled and
// keeps the peak. The shared traces hold no 2021-format [memory] events
// (Bytes without Total Allocated); tracetest.Memory2021 covers that format.
func TestSharedMemory(t *testing.T) {
	for _, c := range []struct {
		name           string
		dev            int64
		events         int64
		peak, reserved int64
		op             string
		cpuRow         bool
	}{
		{"hta/df_index_resolver/df_index_resolver.json.gz", 1, 26770, 6629508096, 12782141440, "aten::empty", true},
		{"tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 0, 218, 101305344, 121634816, "aten::empty", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := deriveShared(t, c.name)
			wantI(t, "memory_peak_allocated_bytes", f.MemoryPeakAllocatedBytes, c.peak)
			wantI(t, "memory_reserved_at_peak_bytes", f.MemoryReservedAtPeakBytes, c.reserved)
			wantF(t, "memory_fragmentation_ratio", f.MemoryFragmentationRatio, float64(c.reserved-c.peak)/float64(c.reserved))
			if f.MemoryPeakOp == nil || *f.MemoryPeakOp != c.op {
				t.Errorf("memory_peak_op = %v, want %s", f.MemoryPeakOp, c.op)
			}
			g := memoryDevice(t, f, c.dev)
			if g.Events != c.events || !g.AllocatedKnown || !g.HasReserved {
				t.Errorf("row %+v", g)
			}
			if n := len(g.Curve); n < 2 || n > 302 || n > int(c.events) {
				t.Errorf("%d curve points for %d events", n, c.events)
			}
			var top int64
			for _, p := range g.Curve {
				top = max(top, p.AllocatedBytes)
			}
			if top != c.peak {
				t.Errorf("curve peak %d, want %d", top, c.peak)
			}
			if c.cpuRow {
				memoryDevice(t, f, -1)
			}
		})
	}
}

// nn.Module frames (with_modules) and record_function labels on real
// traces: the bert trace's modules nest under one top-level module that
// launched kernels; nccl_data's labels have GPU time from their launches
// and GPU spans from gpu_user_annotation.
func TestSharedLabelsModules(t *testing.T) {
	t.Run("modules", func(t *testing.T) {
		f := deriveShared(t, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
		if len(f.Modules) == 0 {
			t.Fatal("no modules")
		}
		top := f.Modules[0]
		if top.Depth != 0 || top.GPUUS <= 0 || top.Kernels == 0 {
			t.Errorf("top module %+v", top)
		}
		var kernelUS float64
		for _, k := range f.TopKernels {
			kernelUS += k.TotalUS
		}
		nested := 0
		for _, m := range f.Modules {
			if m.GPUUS > kernelUS+1e-6 {
				t.Errorf("module %s: %v us of GPU time, more than all kernels (%v)", m.Path, m.GPUUS, kernelUS)
			}
			if m.Depth > 0 {
				nested++
			}
		}
		if nested == 0 {
			t.Errorf("no nested module in %+v", f.Modules)
		}
		t.Logf("%d modules; top %s: host %.1f us, GPU %.1f us, %d kernels", len(f.Modules), top.Path, top.TotalUS, top.GPUUS, top.Kernels)
	})
	t.Run("labels", func(t *testing.T) {
		f := deriveShared(t, "hta/nccl_parser_config/nccl_data.json.gz")
		gpu, span := false, false
		for _, l := range f.Labels {
			gpu = gpu || l.GPUUS > 0
			span = span || l.GPUSpanUS != nil && *l.GPUSpanUS > 0
			if l.Path != "" || l.Name == "" {
				t.Errorf("label %+v", l)
			}
		}
		if len(f.Labels) == 0 || !gpu || !span {
			t.Errorf("labels %+v", f.Labels)
		}
	})
}
