package facts_test

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// A DataLoader wait on the main thread is charged to the DataLoader even
// when another thread (autograd's backward thread) makes most launches: the
// gap is charged to the thread that launched the work ending it.
func TestIdleDataloaderOnMainWhileBackwardLaunches(t *testing.T) {
	b := tracetest.New()
	for k := 0; k < 2; k++ {
		s := float64(k) * 1000
		b.Tid = 1
		b.Step(k, s, 1000)
		b.Op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s, 500)
		b.Launch(s+500, 10, "forward", s+510, 100) // main thread: forward
		b.Tid = 2                                  // backward thread: many launches
		for i := 0; i < 10; i++ {
			b.Launch(s+620+float64(i)*30, 5, "backward", s+630+float64(i)*30, 20)
		}
	}
	b.Tid = 1
	f := derive(t, b)
	// Step 1's gap [920, 1510) ends at its forward kernel, launched at 1500
	// on the main thread after a 500 us DataLoader wait. The old model
	// charged it to the backward thread's nothing: untraced.
	if f.GPUIdleDataloaderRatio == nil || *f.GPUIdleDataloaderRatio < 0.45 {
		t.Fatalf("gpu_idle_dataloader_ratio = %v, want the DataLoader waits (about 0.5)", fmtp(f.GPUIdleDataloaderRatio))
	}
	if c := f.IdleCulprits["dataloader"]; len(c) == 0 || c[0].Calls != 2 {
		t.Errorf("dataloader culprits = %+v, want 2 calls", c)
	}
}

// A gap whose next work was launched before the gap began is a GPU-side
// wait (queued), not host time.
func TestIdleQueuedWhenLaunchedBefore(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Launch(10, 10, "first", 30, 100)  // [30,130)
	b.Launch(40, 10, "second", 600, 50) // launched at 40, runs at 600: waits on a dependency
	b.Op("aten::mul", 100, 800)         // the host is busy meanwhile: not its fault
	f := derive(t, b)
	// Gap [130, 600) is queued: the launch of "second" ended at 50; so is
	// [20, 30), between the launch of "first" ending and its start.
	if f.GPUIdleQueuedRatio == nil || !near(*f.GPUIdleQueuedRatio, 0.48) {
		t.Errorf("gpu_idle_queued_ratio = %v, want 0.48", fmtp(f.GPUIdleQueuedRatio))
	}
	if c := f.IdleCulprits["queued"]; len(c) == 0 || c[0].Name != "second" || c[0].StreamWait != "" {
		t.Errorf("queued culprits = %+v, want the waiting kernel, no stream wait", c)
	}
}

// A stream-wait call made just before the waiting work's launch is named
// with it; one with a launch between it and that launch is not.
func TestIdleQueuedAfterStreamWait(t *testing.T) {
	for _, between := range []bool{false, true} {
		b := tracetest.New()
		b.Step(1, 0, 1000)
		b.Launch(10, 10, "first", 30, 100) // [30,130)
		b.Runtime("hipStreamWaitEvent", 25, 3)
		if between {
			b.Launch(30, 2, "other", 140, 5)
		}
		b.Launch(40, 10, "second", 600, 50)
		b.Op("aten::mul", 100, 800)
		f := derive(t, b)
		c := f.IdleCulprits["queued"]
		if len(c) == 0 || c[0].Name != "second" {
			t.Fatalf("queued culprits = %+v, want the waiting kernel", c)
		}
		want, wantUS := "hipStreamWaitEvent", 12.0 // returned at 28, launch at 40
		if between {
			want, wantUS = "", 0
		}
		if c[0].StreamWait != want || !near(c[0].StreamWaitUS, wantUS) {
			t.Errorf("launch between %v: stream wait %q %v us, want %q %v", between, c[0].StreamWait, c[0].StreamWaitUS, want, wantUS)
		}
	}
}

// A blocking pageable copy is a host sync: the GPU time waiting on it is
// sync, and the culprit is the copy call.
func TestIdleBlockingCopyIsSync(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Launch(0, 10, "k", 20, 100)            // [20,120)
	b.Memcpy(130, "DtoH", true, 140, 10, 64) // the copy call lasts 5 us
	b.Runtime("cudaMemcpyAsync", 200, 300)   // a long blocking copy ...
	b.GPU("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 210, 10, 3, nil)
	b.Launch(600, 10, "next", 620, 100)
	f := derive(t, b)
	// Gap [220, 620): host late until the launch at 600: [220,500) sync
	// (280 us), [500,600) untraced, launch 10, queued 10.
	if f.GPUIdleSyncRatio == nil || !near(*f.GPUIdleSyncRatio, 0.28) {
		t.Errorf("gpu_idle_sync_ratio = %v, want 0.28", fmtp(f.GPUIdleSyncRatio))
	}
	if c := f.IdleCulprits["sync"]; len(c) == 0 || c[0].Name != "cudaMemcpyAsync" {
		t.Errorf("sync culprits = %+v, want cudaMemcpyAsync", c)
	}
}

// A one-off 1 s call inside the window (lazy module loading on the first
// launch) is warm-up, not launch overhead, and warmup_ratio measures it.
func TestIdleOneOffCallIsWarmup(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 10, 1_100_000)
	b.Launch(10, 1_000_000, "first", 1_000_020, 100) // a 1 s first launch
	for i := 0; i < 20; i++ {
		ts := 1_000_200 + float64(i)*100
		b.Launch(ts, 5, "k", ts+10, 50)
	}
	b.Step(2, 1_100_010, 10_000)
	for i := 0; i < 20; i++ {
		ts := 1_100_010 + float64(i)*100
		b.Launch(ts, 5, "k", ts+10, 50)
	}
	f := derive(t, b)
	if f.WarmupRatio == nil || *f.WarmupRatio < 0.85 {
		t.Fatalf("warmup_ratio = %v, want the 1 s call (about 0.9)", fmtp(f.WarmupRatio))
	}
	if f.GPUIdleWarmupRatio == nil || *f.GPUIdleWarmupRatio < 0.85 {
		t.Errorf("gpu_idle_warmup_ratio = %v, want about 0.9", fmtp(f.GPUIdleWarmupRatio))
	}
	if *f.GPUIdleLaunchRatio > 0.01 {
		t.Errorf("gpu_idle_launch_ratio = %v, want the one-off out of launch", *f.GPUIdleLaunchRatio)
	}
}

// The same slow call in every step is a per-step cost, not warm-up. The
// culprit names the autograd node its longest call ran under.
func TestIdleSlowCallEveryStepIsNotWarmup(t *testing.T) {
	b := tracetest.New()
	for k := 0; k < 3; k++ {
		s := 10 + float64(k)*200_000
		b.Step(k, s, 200_000)
		b.Op("autograd::engine::evaluate_function: ReluBackward0", s, 100_020)
		b.Op("aten::threshold_backward", s, 100_010)
		b.Runtime("cudaFree", s, 100_000)
		for i := 0; i < 30; i++ {
			b.Runtime("cudaFree", s+100_000+float64(i)*10, 2)
		}
		b.Launch(s+150_000, 5, "k", s+150_010, 1000)
	}
	f := derive(t, b)
	wantF(t, "warmup_ratio", f.WarmupRatio, 0)
	if f.GPUIdleRuntimeRatio == nil || *f.GPUIdleRuntimeRatio < 0.4 {
		t.Errorf("gpu_idle_runtime_ratio = %v, want the cudaFree calls (about 0.5)", fmtp(f.GPUIdleRuntimeRatio))
	}
	if c := f.IdleCulprits["runtime"]; len(c) == 0 || c[0].Name != "cudaFree" || c[0].Op != "autograd::engine::evaluate_function: ReluBackward0" {
		t.Errorf("runtime culprits = %+v, want cudaFree first, under ReluBackward0", c)
	}
}

// Queued idle before work that starts right after its launch returned is
// launch latency, kept apart from dependency waits.
func TestIdleQueuedLatency(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Launch(0, 10, "a", 20, 10)    // [20,30): queued [10,20) after a 10 us launch
	b.Launch(100, 10, "b", 400, 10) // starts 290 us after its launch: a dependency
	b.Op("aten::mul", 30, 60)       // host busy in [30,90)
	b.Launch(500, 10, "c", 520, 10) // starts 10 us after its launch: latency
	f := derive(t, b)
	// Gap [30,400): host late [30,100) (cpu_op [30,90), untraced [90,100)),
	// launch [100,110), queued [110,400) = 290, not latency. Gap [410,520):
	// launch [500,510), queued [510,520) = 10, latency. Leading [10,20).
	wantF(t, "gpu_idle_queued_ratio", f.GPUIdleQueuedRatio, 0.31)
	wantF(t, "gpu_idle_queued_latency_ratio", f.GPUIdleQueuedLatencyRatio, 0.01)
	wantF(t, "gpu_idle_queued_leading_ratio", f.GPUIdleQueuedLeadingRatio, 0.01)
	// The gap W begins with, [0,20): the launch [0,10) and the queue.
	wantF(t, "gpu_idle_leading_ratio", f.GPUIdleLeadingRatio, 0.02)
}

// The idle W begins with is counted whole (host time before the launch
// included); a trace that begins busy has none.
func TestIdleLeading(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 1000)
	b.Op("aten::mul", 0, 300)       // the host works [0,300)
	b.Launch(300, 10, "a", 400, 50) // queued [310,400)
	f := derive(t, b)
	wantF(t, "gpu_idle_leading_ratio", f.GPUIdleLeadingRatio, 0.4)
	wantF(t, "gpu_idle_queued_leading_ratio", f.GPUIdleQueuedLeadingRatio, 0.09)

	b = tracetest.New()
	b.Step(1, 100, 1000)
	b.Launch(0, 10, "a", 50, 200) // busy from before the step to 250
	b.Launch(300, 10, "b", 320, 10)
	f = derive(t, b)
	wantF(t, "gpu_idle_leading_ratio", f.GPUIdleLeadingRatio, 0)
}

// oneOffOpTrace is steps 10 ms steps with a launch each, each step's host
// time in calls aten::to calls of 10 us; the first step's first aten::to
// lasts first us (with, when sync, a cudaStreamSynchronize inside it).
func oneOffOpTrace(first float64, steps, calls int, sync bool) *tracetest.Builder {
	b := tracetest.New()
	for k := 0; k < steps; k++ {
		s := float64(k) * 10_000
		b.Step(k, s, 10_000)
		at := s
		for c := 0; c < calls; c++ {
			dur := 10.0
			if k == 0 && c == 0 {
				dur = first
				if sync {
					b.Runtime("cudaStreamSynchronize", at+10, first-20)
				}
			}
			b.Op("aten::to", at, dur)
			at += dur
		}
		b.Launch(at, 5, "k", at+10, 100)
	}
	return b
}

// The first call of an operator far slower than its other calls is
// warm-up: the GPU idle charged to CPU operators inside it is
// gpu_idle_cpu_op_oneoff_ratio, named under cpu_op_oneoff; warmup_ratio
// (runtime calls) is unchanged.
func TestIdleOneOffOperator(t *testing.T) {
	f := derive(t, oneOffOpTrace(5000, 3, 2, false))
	// W = 3 x 10 ms; the 5 ms first aten::to is 1/6 of it.
	wantF(t, "gpu_idle_cpu_op_oneoff_ratio", f.GPUIdleCPUOpOneOffRatio, 5000.0/30000)
	wantF(t, "warmup_ratio", f.WarmupRatio, 0)
	if c := f.IdleCulprits[facts.OneOffOpCulprits]; len(c) != 1 || c[0].Name != "aten::to" || c[0].Calls != 1 {
		t.Errorf("one-off operator culprits = %+v, want the first aten::to", c)
	}
	if *f.GPUIdleCPUOpRatio < *f.GPUIdleCPUOpOneOffRatio {
		t.Errorf("gpu_idle_cpu_op_ratio %v below its one-off part %v", *f.GPUIdleCPUOpRatio, *f.GPUIdleCPUOpOneOffRatio)
	}
	// The operators' culprits leave the one-off call to its own list.
	for _, c := range f.IdleCulprits["cpu_op"] {
		if c.Name == "aten::to" && c.IdleUS >= 1000 {
			t.Errorf("cpu_op culprit %+v holds the one-off call's 5 ms", c)
		}
	}
}

// Below 5% of |W| (down to 1%), an operator call is set-up only as the
// first call of its name: a first GEMM of a shape choosing its algorithm
// is, a slow call in a later step is a stall.
func TestIdleOneOffOperatorSmall(t *testing.T) {
	// W = 20 x 10 ms; 3 ms is 1.5% of it.
	f := derive(t, oneOffOpTrace(3000, 20, 2, false))
	wantF(t, "first call: gpu_idle_cpu_op_oneoff_ratio", f.GPUIdleCPUOpOneOffRatio, 3000.0/200_000)

	b := tracetest.New()
	for k := 0; k < 20; k++ {
		s := float64(k) * 10_000
		b.Step(k, s, 10_000)
		at := s
		for c := 0; c < 2; c++ {
			dur := 10.0
			if k == 5 && c == 1 {
				dur = 3000 // a stall late in the window, not the first call
			}
			b.Op("aten::to", at, dur)
			at += dur
		}
		b.Launch(at, 5, "k", at+10, 100)
	}
	f = derive(t, b)
	wantF(t, "later call: gpu_idle_cpu_op_oneoff_ratio", f.GPUIdleCPUOpOneOffRatio, 0)
}

// An operator called once or twice in the window has no median to be slow
// against, and one that waits in a host sync is slow for the GPU, not
// warming up.
func TestIdleOneOffOperatorQuiet(t *testing.T) {
	for _, tt := range []struct {
		name         string
		steps, calls int
		sync         bool
	}{{"two calls", 2, 1, false}, {"a sync inside", 3, 2, true}} {
		f := derive(t, oneOffOpTrace(5000, tt.steps, tt.calls, tt.sync))
		wantF(t, tt.name+": gpu_idle_cpu_op_oneoff_ratio", f.GPUIdleCPUOpOneOffRatio, 0)
	}
}
