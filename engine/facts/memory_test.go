package facts_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

const gib = tracetest.GiB

// memoryDevice returns the Memory row of a device, or fails.
func memoryDevice(t *testing.T, f *facts.Facts, id int64) facts.MemoryDevice {
	t.Helper()
	for _, m := range f.Memory {
		if m.DeviceID == id {
			return m
		}
	}
	t.Fatalf("no memory row for device %d in %+v", id, f.Memory)
	return facts.MemoryDevice{}
}

// The 2022+ [memory] format: allocated and reserved per device, the peak
// with its operator, fragmentation at the peak, allocations per step and
// the step rows (tracetest.MemoryModules documents the numbers).
func TestMemoryModernFormat(t *testing.T) {
	f := derive(t, tracetest.MemoryModules())
	if len(f.Memory) != 2 || f.Memory[0].Device != "GPU 0" || f.Memory[1].Device != "CPU" {
		t.Fatalf("memory rows %+v", f.Memory)
	}
	peak := int64(30*gib + 3*gib/4 + 7*gib)
	wantI(t, "memory_peak_allocated_bytes", f.MemoryPeakAllocatedBytes, peak)
	wantF(t, "memory_peak_ratio", f.MemoryPeakRatio, float64(peak)/85899345920)
	wantI(t, "memory_reserved_at_peak_bytes", f.MemoryReservedAtPeakBytes, 70*gib)
	wantF(t, "memory_reserved_at_peak_ratio", f.MemoryReservedAtPeakRatio, 70.0*gib/85899345920)
	wantF(t, "memory_fragmentation_ratio", f.MemoryFragmentationRatio, 1-37.75/70)
	wantF(t, "memory_growth_bytes_per_step", f.MemoryGrowthBytesPerStep, gib/4)
	wantF(t, "memory_allocs_per_step", f.MemoryAllocsPerStep, 4)
	if f.MemoryPeakOp == nil || *f.MemoryPeakOp != "aten::mm" {
		t.Errorf("memory_peak_op = %v, want aten::mm", f.MemoryPeakOp)
	}
	g := memoryDevice(t, f, 0)
	if !g.AllocatedKnown || !g.HasReserved || g.Events != 24 || g.Allocs != 16 || g.PeakOffsetUS != 30000+4350 {
		t.Errorf("GPU row %+v", g)
	}
	if len(g.Steps) != 4 {
		t.Fatalf("steps %+v", g.Steps)
	}
	for k, st := range g.Steps {
		base := int64(30*gib + k*gib/4)
		if st.Step != "ProfilerStep#"+string(rune('1'+k)) || st.Allocs != 4 || st.PeakAllocatedBytes != base+7*gib || st.EndAllocatedBytes != base+gib/4 {
			t.Errorf("step %d: %+v", k, st)
		}
	}
	c := memoryDevice(t, f, -1)
	if c.PeakAllocatedBytes != 4<<20 || c.Allocs != 4 || c.PeakOp != "" {
		t.Errorf("CPU row %+v", c)
	}
}

// The 2021 format (Bytes and Device Type only): allocated memory is the
// running sum of Bytes, raised so it never goes below zero, and flagged
// as a lower bound; Total Reserved is unknown, so fragmentation is null.
func TestMemory2021FormatCurve(t *testing.T) {
	f := derive(t, tracetest.Memory2021())
	wantI(t, "memory_peak_allocated_bytes", f.MemoryPeakAllocatedBytes, 1792<<20)
	wantF(t, "memory_growth_bytes_per_step", f.MemoryGrowthBytesPerStep, -256<<20)
	wantF(t, "memory_allocs_per_step", f.MemoryAllocsPerStep, 2)
	if f.MemoryPeakOp == nil || *f.MemoryPeakOp != "aten::cat" {
		t.Errorf("memory_peak_op = %v, want aten::cat", f.MemoryPeakOp)
	}
	if f.MemoryFragmentationRatio != nil || f.MemoryReservedAtPeakBytes != nil {
		t.Errorf("fragmentation %v reserved %v without Total Reserved", f.MemoryFragmentationRatio, f.MemoryReservedAtPeakBytes)
	}
	g := memoryDevice(t, f, 0)
	if g.AllocatedKnown || g.HasReserved || g.Events != 12 || g.PeakReservedBytes != nil {
		t.Errorf("GPU row %+v", g)
	}
	if last := g.Curve[len(g.Curve)-1]; last.AllocatedBytes != 256<<20 {
		t.Errorf("last point %+v", last)
	}
	if c := memoryDevice(t, f, -1); c.PeakAllocatedBytes != 3*4096 || c.AllocatedKnown {
		t.Errorf("CPU row %+v", c)
	}
}

// A long curve is cut to at most 2*150+2 points in time order, keeping
// the first and last samples and the peak exactly.
func TestMemoryCurveDownsampled(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 200000)
	b.Launch(10, 5, "k", 20, 100)
	var alloc int64
	for i := 0; i < 20000; i++ {
		d := int64((i*7919)%1000) << 10
		if i%2 == 1 {
			d = -d / 2
		}
		if i == 13001 {
			d = 900 << 20 // the peak
		}
		if i == 13002 {
			d = -900 << 20
		}
		alloc += d
		b.Memory(float64(i)*10, d, alloc, 4*gib)
	}
	f := derive(t, b)
	g := memoryDevice(t, f, 0)
	if n := len(g.Curve); n > 302 || n < 150 {
		t.Fatalf("%d points", n)
	}
	top := g.Curve[0]
	for k, p := range g.Curve {
		if k > 0 && p.OffsetUS < g.Curve[k-1].OffsetUS {
			t.Fatalf("point %d out of order", k)
		}
		if p.AllocatedBytes > top.AllocatedBytes {
			top = p
		}
	}
	if top.AllocatedBytes != g.PeakAllocatedBytes || top.OffsetUS != 130010 || g.PeakOffsetUS != 130010 {
		t.Errorf("curve peak %+v, row peak %d at %v", top, g.PeakAllocatedBytes, g.PeakOffsetUS)
	}
	if g.Curve[0].OffsetUS != 0 || g.Curve[len(g.Curve)-1].OffsetUS != 199990 {
		t.Errorf("ends %+v %+v", g.Curve[0], g.Curve[len(g.Curve)-1])
	}
}

// TestMemoryLabelsModulesGolden pins the memory, label and module tables
// of both fixtures; -update rewrites testdata/*.golden.json.
func TestMemoryLabelsModulesGolden(t *testing.T) {
	for name, b := range map[string]*tracetest.Builder{"memory_modules": tracetest.MemoryModules(), "memory_2021": tracetest.Memory2021()} {
		f := derive(t, b)
		got, err := json.MarshalIndent(struct {
			Memory  []facts.MemoryDevice `json:"memory"`
			Labels  []facts.LabelStat    `json:"labels"`
			Modules []facts.LabelStat    `json:"modules"`
		}{f.Memory, f.Labels, f.Modules}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", name+".golden.json")
		if *updateFlag {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read golden: %v (run go test ./engine/facts -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden (run go test ./engine/facts -update and read the diff):\n%s", path, got)
		}
	}
}

// Labels and modules of tracetest.MemoryModules: host time from their
// spans, GPU time from the kernels whose launch they enclose, modules
// flattened with their path and including their submodules' kernels.
func TestLabelsAndModules(t *testing.T) {
	f := derive(t, tracetest.MemoryModules())
	type row struct {
		calls    int64
		cpu, gpu float64
		kernels  int64
		span     float64 // gpu_user_annotation; -1 for none
		depth    int
	}
	got := map[string]row{}
	for _, l := range f.Labels {
		span := -1.0
		if l.GPUSpanUS != nil {
			span = *l.GPUSpanUS
		}
		got["label "+l.Name] = row{l.Calls, l.TotalUS, l.GPUUS, l.Kernels, span, l.Depth}
	}
	for _, m := range f.Modules {
		if m.GPUSpanUS != nil || m.Name != m.Path[max(0, len(m.Path)-len(m.Name)):] {
			t.Errorf("module %+v", m)
		}
		got["module "+m.Path] = row{m.Calls, m.TotalUS, m.GPUUS, m.Kernels, -1, m.Depth}
	}
	want := map[string]row{
		"label forward":                     {4, 16000, 3600, 12, 8800, 0},
		"label backward":                    {4, 16000, 8000, 4, 8000, 0},
		"module Model_0":                    {4, 15400, 3600, 12, -1, 0},
		"module Model_0/Encoder_0":          {4, 8000, 3200, 8, -1, 1},
		"module Model_0/Encoder_0/Linear_0": {4, 4000, 1200, 4, -1, 2},
		"module Model_0/Head_0":             {4, 6400, 400, 4, -1, 1},
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g.calls != w.calls || !near(g.cpu, w.cpu) || !near(g.gpu, w.gpu) || g.kernels != w.kernels || !near(g.span, w.span) || g.depth != w.depth {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rows %v", got)
	}
	// Sorted by the larger of GPU and host time: backward and forward tie
	// on host time; Model_0 (15.4 ms) before Encoder_0 (8 ms).
	if f.Labels[0].Name != "backward" || f.Modules[0].Path != "Model_0" || f.Modules[1].Path != "Model_0/Encoder_0" {
		t.Errorf("order: labels %v, modules %v", f.Labels, f.Modules)
	}
}
