package facts_test

import (
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// shaped appends an operator with Input Dims (record_shapes).
func shaped(b *tracetest.Builder, name string, ts, dur float64, dims ...[]int) {
	b.Raw(map[string]any{"ph": "X", "cat": "cpu_op", "name": name, "pid": b.Pid, "tid": b.Tid,
		"ts": ts, "dur": dur, "args": map[string]any{"Input Dims": dims}})
}

// TestBatchSize: the leading dimension of the first operator after the
// step's DataLoader fetch, where a parameter-shaped op before the fetch and
// an empty shape do not count; the value most steps agree on wins.
func TestBatchSize(t *testing.T) {
	b := tracetest.New()
	for k, batch := range []int{64, 64, 7} { // a short last batch
		ts := float64(k) * 1000
		b.Step(k+1, ts, 1000)
		shaped(b, "aten::zero_", ts+10, 5, []int{1000, 512}) // zero_grad before the fetch
		b.Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", ts+20, 100)
		shaped(b, "aten::to", ts+130, 20, []int{}, []int{batch, 3, 224, 224})
		shaped(b, "aten::conv2d", ts+200, 50, []int{batch, 3, 224, 224}, []int{64, 3, 7, 7})
	}
	f := derive(t, b)
	if f.BatchSize == nil || *f.BatchSize != 64 {
		t.Fatalf("batch_size = %v, want 64", f.BatchSize)
	}
	// Without shapes the fact is null.
	if f := derive(t, tracetest.DataloaderBound()); f.BatchSize != nil {
		t.Errorf("batch_size without record_shapes = %d, want null", *f.BatchSize)
	}
}

// TestStepDurationsUS: the per-step durations diff compares are the ones
// step_time_us summarises (the last step's drain cut).
func TestStepDurationsUS(t *testing.T) {
	b := tracetest.New()
	b.Step(1, 0, 100)
	b.Launch(10, 5, "k1", 20, 150) // runs into step 2's start: clipped there
	b.Step(2, 100, 100)
	b.Launch(110, 5, "k2", 120, 400) // drains 320 us past the CPU end
	f := derive(t, b)
	d := f.StepDurationsUS()
	if len(d) != 2 || f.LastStepDrainUS == nil || *f.LastStepDrainUS <= 0 {
		t.Fatalf("durations %v drain %v", d, f.LastStepDrainUS)
	}
	if mx := max(d[0], d[1]); mx != f.StepTimeUS.Max || (d[0]+d[1])/2 != f.StepTimeUS.Mean {
		t.Errorf("durations %v do not match step_time_us %+v", d, *f.StepTimeUS)
	}
}
