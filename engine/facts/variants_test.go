package facts_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

func deriveJSON(t *testing.T, src string) *facts.Facts {
	t.Helper()
	tr, err := trace.Parse(strings.NewReader(src), "variant.json")
	if err != nil {
		t.Fatal(err)
	}
	return facts.Derive(tr, facts.DefaultConfig())
}

// ROCm: HIP runtime names, the GPU on pid 2, work on stream 0.
func TestROCmTrace(t *testing.T) {
	b := tracetest.New()
	b.Device, b.Stream = 2, 0
	b.Step(1, 0, 100)
	c := b.Runtime("hipLaunchKernel", 10, 8)
	b.GPU("kernel", "Cijk_Ailk_Bljk_SB_MT64x64", 20, 4, c, nil)
	c = b.Runtime("hipExtModuleLaunchKernel", 30, 2)
	b.GPU("kernel", "void at::native::elementwise_kernel", 40, 10, c, nil)
	f := derive(t, b)
	wantI(t, "primary_device", f.PrimaryDevice, 2)
	wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.14)
	// hipLaunchKernel 8 us >= kernel 4 us; the second launch is shorter.
	wantF(t, "launch_bound_kernel_ratio", f.LaunchBoundKernelRatio, 0.5)
}

// Launches through the driver API (Triton's cuLaunchKernel) and
// cudaLaunchKernelExC link like cudaLaunchKernel.
func TestDriverAndExCLaunches(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Raw(map[string]any{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 100, "tid": 1, "ts": 10, "dur": 5, "args": map[string]any{"correlation": 900}})
	b.GPU("kernel", "triton_poi_fused_add_0", 16, 2, 900, nil)
	c := b.Runtime("cudaLaunchKernelExC", 20, 1)
	b.GPU("kernel", "gemm", 22, 30, c, nil)
	f := derive(t, b)
	wantF(t, "launch_bound_kernel_ratio", f.LaunchBoundKernelRatio, 0.5)
	if f.LaunchDelayUS == nil || !near(f.LaunchDelayUS.Max, 1) {
		t.Errorf("launch delay %+v, want max 1 us", f.LaunchDelayUS)
	}
}

// An accelerator that is not a GPU (MTIA-style categories): CPU facts
// work, GPU facts are null.
func TestNonGPUAccelerator(t *testing.T) {
	f := deriveJSON(t, `{"traceEvents":[
	{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
	{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":10,"dur":20},
	{"ph":"X","cat":"mtia_runtime","name":"mtiaLaunchKernel","pid":1,"tid":1,"ts":40,"dur":5},
	{"ph":"X","cat":"mtia_ccp_events","name":"kernel_x","pid":17,"tid":1,"ts":50,"dur":30}]}`)
	if f.HasGPU || f.GPUBusyRatio != nil || f.KernelCount != nil {
		t.Errorf("GPU facts on an MTIA trace: has_gpu %v busy %v", f.HasGPU, f.GPUBusyRatio)
	}
	wantF(t, "sync_per_step", f.SyncPerStep, 1)
	if f.StepsCount != 1 || !near(f.WindowUS, 100) {
		t.Errorf("steps %d window %v", f.StepsCount, f.WindowUS)
	}
}

// ts relative to baseTimeNanoseconds and absolute epoch microseconds give
// the same facts.
func TestBaseTimeVsEpoch(t *testing.T) {
	mk := func(base string, t0 float64) string {
		return fmt.Sprintf(`{%s"traceEvents":[
		{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":%.3f,"dur":100},
		{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,"dur":5,"args":{"correlation":1}},
		{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%.3f,"dur":40,"args":{"correlation":1,"device":0,"stream":7}}]}`, base, t0, t0+10, t0+20)
	}
	rel := deriveJSON(t, mk(`"baseTimeNanoseconds":1721000000000000000,`, 12345.5))
	abs := deriveJSON(t, mk("", 1721000000012345.5))
	for _, f := range []*facts.Facts{rel, abs} {
		wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.4)
		if !near(f.WindowUS, 100) {
			t.Errorf("window %v", f.WindowUS)
		}
	}
}

// deviceProperties missing or empty, distributedInfo without a rank: the
// facts that need them are null, the rest are computed.
func TestMissingMetadata(t *testing.T) {
	b := tracetest.New().Top("deviceProperties", []any{}).Top("distributedInfo", map[string]any{"backend": "nccl"})
	b.Step(1, 0, 100)
	b.Launch(1, 1, "k", 10, 10)
	f := derive(t, b)
	if f.Device != nil || f.Rank != nil || f.WorldSize != nil {
		t.Errorf("device %+v rank %v world %v, want nulls", f.Device, f.Rank, f.WorldSize)
	}
	wantI(t, "primary_device", f.PrimaryDevice, 0)
	wantF(t, "gpu_busy_ratio", f.GPUBusyRatio, 0.1)
}

// Thousands of M metadata events (one process per synthetic pid) are read
// and not stored.
func TestManyMetadataEvents(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString(`{"traceEvents":[`)
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&buf, `{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"proc %d"}},`, 1000+i, i)
	}
	buf.WriteString(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}`)
	tr, err := trace.Parse(&buf, "meta.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Health.EventsRead != 20001 || len(tr.Events) != 1 {
		t.Errorf("read %d kept %d", tr.Health.EventsRead, len(tr.Events))
	}
}

// A kernel that starts while its launch call is still returning is
// normal: its launch delay is 0 and no warning is raised. One that starts
// before its launch call begins (host/device clock skew) is linked by
// correlation, its delay clamped at 0, and a warning is raised.
func TestClockSkew(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Launch(10, 10, "early", 15, 5) // starts 5 us before the launch ends
	b.Launch(30, 2, "late", 40, 5)   // delay 8 us
	f := derive(t, b)
	if f.LaunchDelayUS == nil || f.LaunchDelayUS.P50 != 4 || f.LaunchDelayUS.Max != 8 {
		t.Errorf("launch delay %+v, want p50 4 (0 and 8) max 8", f.LaunchDelayUS)
	}
	if len(f.Diagnostics) != 0 {
		t.Errorf("a kernel starting inside its launch call: diagnostics %+v, want none", f.Diagnostics)
	}

	b.Launch(60, 5, "skewed", 57, 2) // starts 3 us before the launch begins
	f = derive(t, b)
	if f.LaunchDelayUS == nil || f.LaunchDelayUS.P50 != 0 || f.LaunchDelayUS.Max != 8 {
		t.Errorf("launch delay %+v, want p50 0 (0, 0 and 8) max 8", f.LaunchDelayUS)
	}
	if len(f.Diagnostics) != 1 || f.Diagnostics[0].Reason != "clock_skew" || f.Diagnostics[0].Count != 1 || !strings.Contains(f.Diagnostics[0].Message, "before their launch call begins") {
		t.Errorf("diagnostics %+v, want one clock_skew", f.Diagnostics)
	}
}
