package facts

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// Def documents one fact: the catalogue is the single source for fact
// names, units, definitions, the source of each definition, the
// capabilities a fact needs, the direction in which it improves and its
// numeric leaves. `stepdoctor facts --list`, docs/FACTS.md, report units,
// "not evaluated" hints, diff labels and the --regression-fact check all
// read it; a test keeps it equal to the Facts fields that rules see.
//
// Adding a fact: add the Facts field and one row here (one row per line,
// keyed fields). Fields left out take their zero values: no Needs (always
// available) and Direction Neutral (a change is neither better nor worse).
type Def struct {
	Name       string    // json/expr/Rego name
	Unit       Unit      // how values are measured and shown
	Definition string    // what the fact measures
	Source     string    // where the definition comes from
	Needs      []Need    // what the trace must have, else the fact is null
	Direction  Direction // which change is an improvement
}

// Unit is the unit of a fact. The names are the strings that the catalogue,
// the JSON of diffs and evidence carry.
type Unit string

// Units of facts.
const (
	UnitUS           Unit = "us"             // microseconds
	UnitBytes        Unit = "bytes"          // bytes
	UnitBytesPerStep Unit = "bytes_per_step" // bytes per ProfilerStep
	UnitRatio        Unit = "ratio"          // 0..1 (some ratios may exceed 1)
	UnitCount        Unit = "count"          // an integer count
	UnitPerStep      Unit = "per_step"       // per ProfilerStep
	UnitPerMS        Unit = "per_ms"         // per millisecond of W
	UnitBool         Unit = "bool"           // true/false
	UnitID           Unit = "id"             // an identifier (rank, device id)
	UnitObject       Unit = "object"         // a nested object (not a number)
	UnitStatsUS      Unit = "stats_us"       // {mean, p50, p90, max} in microseconds
	UnitFLOPS        Unit = "flops_per_s"    // floating-point operations per second
)

// Units lists every unit a catalogue entry may have.
var Units = []Unit{UnitUS, UnitBytes, UnitBytesPerStep, UnitRatio, UnitCount, UnitPerStep, UnitPerMS, UnitBool, UnitID, UnitObject, UnitStatsUS, UnitFLOPS}

// StatsLeaves are the fields of a stats_us fact (StepStats), in order.
var StatsLeaves = []string{"mean", "p50", "p90", "max"}

// Need is a capability of the trace that a fact depends on. The value is
// the label docs/FACTS.md shows.
type Need string

// Capabilities facts need.
const (
	NeedGPU           Need = "gpu"             // CUDA/HIP activity (has_gpu)
	NeedSteps         Need = "steps"           // ProfilerStep#N spans (has_steps)
	NeedTwoSteps      Need = "2+ steps"        // at least two steps
	NeedShapes        Need = "record_shapes"   // has_shapes
	NeedMemory        Need = "profile_memory"  // has_memory
	NeedReserved      Need = "Total Reserved"  // [memory] events with Total Reserved (2022 and later)
	NeedDistInfo      Need = "distributedInfo" // torch.distributed metadata
	NeedRankID        Need = "distributedInfo or a rank in the file name"
	NeedDeviceProps   Need = "deviceProperties"                      // the primary device's properties
	NeedKernels       Need = "kernels in W"                          // primary-device kernels starting in W
	NeedCompute       Need = "compute kernels in W"                  // primary-device kernels starting in W other than collective kernels
	NeedLaunchLinks   Need = "launch links"                          // kernels linked to their launch calls
	NeedLaunchCalls   Need = "launch calls"                          // kernel launch calls in W
	NeedDataLoader    Need = "DataLoader events"                     // enumerate(DataLoader)#... spans
	NeedCommKernels   Need = "communication kernels"                 // collective kernels in W
	NeedOptimizer     Need = "optimizer spans"                       // Optimizer.step#... or zero_grad#... spans
	NeedOptimizerStep Need = "optimizer step spans"                  // Optimizer.step#... spans
	NeedZeroGrad      Need = "zero_grad spans"                       // Optimizer.zero_grad#... spans
	NeedRanks         Need = "2+ ranks"                              // several ranks analyzed together
	NeedDevicePeak    Need = "a device in the peak table"            // the primary GPU is in Devices
	NeedModelledOps   Need = "matmul/conv/attention ops with shapes" // modelled operators that launched kernels in W
	NeedViewOps       Need = "50+ view ops"                          // 50 or more aten::view / as_strided calls in W
)

// Format writes a value of unit u as reports show it: a ratio as a
// percentage, microseconds as µs or ms, bytes as B, anything else as a
// plain number (whole when it is).
func (u Unit) Format(x float64) string {
	switch u {
	case UnitRatio:
		return fmt.Sprintf("%.1f%%", 100*x)
	case UnitUS, UnitStatsUS:
		if math.Abs(x) >= 1000 {
			return fmt.Sprintf("%.2f ms", x/1000)
		}
		return fmt.Sprintf("%.1f µs", x)
	case UnitBytes, UnitBytesPerStep:
		return fmt.Sprintf("%.0f B", x)
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Direction says which change of a fact is an improvement.
type Direction int

// Directions. The zero value is Neutral: a rate or a size of the profile
// itself, whose change says nothing good or bad by itself.
const (
	Neutral      Direction = iota // neither direction is better
	HigherBetter                  // an increase is an improvement
	LowerBetter                   // a decrease is an improvement
)

// String returns "neutral", "higher is better" or "lower is better".
func (d Direction) String() string {
	switch d {
	case HigherBetter:
		return "higher is better"
	case LowerBetter:
		return "lower is better"
	}
	return "neutral"
}

// Leaves names the numeric leaves of the fact: a stats_us fact expands to
// name.mean, name.p50, name.p90 and name.max; bool, id and object facts
// have none.
func (d Def) Leaves() []string {
	switch d.Unit {
	case UnitStatsUS:
		out := make([]string, len(StatsLeaves))
		for i, l := range StatsLeaves {
			out[i] = d.Name + "." + l
		}
		return out
	case UnitObject, UnitID, UnitBool:
		return nil
	}
	return []string{d.Name}
}

// LeafUnit is the unit of one leaf value: us for the leaves of a stats_us
// fact, else the fact's unit.
func (d Def) LeafUnit() Unit {
	if d.Unit == UnitStatsUS {
		return UnitUS
	}
	return d.Unit
}

// NeedsText joins the needs as docs/FACTS.md shows them ("" for none).
func (d Def) NeedsText() string {
	parts := make([]string, len(d.Needs))
	for i, n := range d.Needs {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

// Lookup returns the catalogue entry of a fact name (no leaf suffix).
func Lookup(name string) (Def, bool) {
	i, ok := catalogueIndex()[name]
	if !ok {
		return Def{}, false
	}
	return Catalogue[i], true
}

// LookupLeaf returns the catalogue entry of a numeric leaf: a fact name
// whose value is a number, or name.field of a stats_us fact
// (step_time_us.p90). A fact with no numeric value, or a stats_us fact
// without its field, is not a leaf.
func LookupLeaf(leaf string) (Def, bool) {
	name, _, _ := strings.Cut(leaf, ".")
	d, ok := Lookup(name)
	if !ok {
		return Def{}, false
	}
	for _, l := range d.Leaves() {
		if l == leaf {
			return d, true
		}
	}
	return Def{}, false
}

// UnitOf returns the unit of a fact name or leaf ("step_time_us.p90" is
// us); for fields nested in an object fact (device.total_memory_bytes) and
// names outside the catalogue it falls back to the name's suffix (_us,
// _bytes, _ratio, _count, _per_step, _per_ms), and "" when there is none.
func UnitOf(name string) Unit {
	if d, ok := Lookup(name); ok {
		return d.Unit
	}
	if d, ok := LookupLeaf(name); ok {
		return d.LeafUnit()
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	for _, u := range []Unit{UnitFLOPS, UnitBytesPerStep, UnitPerStep, UnitPerMS, UnitRatio, UnitCount, UnitBytes, UnitUS} {
		if strings.HasSuffix(name, "_"+string(u)) {
			return u
		}
	}
	return ""
}

// RegressionLeaves lists the leaves a regression can be measured on: the
// numeric leaves of facts with a direction, in catalogue order.
func RegressionLeaves() []string {
	var out []string
	for _, d := range Catalogue {
		if d.Direction != Neutral {
			out = append(out, d.Leaves()...)
		}
	}
	return out
}

var catalogueIndex = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, len(Catalogue))
	for i, d := range Catalogue {
		m[d.Name] = i
	}
	return m
})

// Sources cited by the catalogue.
const (
	srcDesign = "docs/ARCHITECTURE.md"
	srcTB     = "TensorBoard profiler plugin (torch-tb-profiler)"
	srcHTA    = "Holistic Trace Analysis (HTA)"
	srcNsys   = "Nsight Systems expert rules"
	srcTorch  = "PyTorch docs"
	srcHere   = "stepdoctor (this catalogue)"
	// commKernels names the kernels that are communication.
	commKernels = "collective kernels (NCCL/RCCL, PyTorch symmetric-memory multimem/one-shot/two-shot, vLLM/SGLang custom all-reduce)"
)

// Catalogue lists every fact rules can read, in report order.
var Catalogue = []Def{
	{Name: "schema_version", Unit: UnitCount, Definition: "version of the facts shape", Source: srcHere},
	{Name: "has_gpu", Unit: UnitBool, Definition: "the trace has kernel, memcpy or memset events", Source: srcDesign},
	{Name: "has_steps", Unit: UnitBool, Definition: "the trace has steps: ProfilerStep#N spans (schedule + prof.step()), else the spans of --step-marker (a regular expression, or auto)", Source: srcDesign},
	{Name: "has_shapes", Unit: UnitBool, Definition: "the trace shows Input Dims args or record_shapes set", Source: srcDesign},
	{Name: "has_stack", Unit: UnitBool, Definition: "the trace shows Call stack args or python_function events, or with_stack set", Source: srcDesign},
	{Name: "has_memory", Unit: UnitBool, Definition: "the trace has [memory] events or profile_memory set", Source: srcDesign},
	{Name: "legacy_export", Unit: UnitBool, Definition: "the trace is the legacy autograd-profiler export of a PyTorch build without Kineto: every event has pid \"CPU functions\" and no cat, so shapes, stacks, memory and GPU activity are never recorded", Source: srcHere},
	{Name: "rank", Unit: UnitID, Definition: "distributedInfo.rank; when several traces are analyzed together without it, the rank number in the file name (rank3, worker3)", Source: srcDesign, Needs: []Need{NeedRankID}},
	{Name: "world_size", Unit: UnitCount, Definition: "distributedInfo.world_size", Source: srcDesign, Needs: []Need{NeedDistInfo}},
	{Name: "primary_device", Unit: UnitID, Definition: "the device with the largest summed kernel time (ties: smallest id); device = args.device, else pid", Source: srcDesign, Needs: []Need{NeedGPU}},
	{Name: "unsupported_accelerator", Unit: UnitID, Definition: "an accelerator whose device events are neither CUDA nor ROCm activity (MTIA: mtia_* categories), so GPU facts do not describe it; empty when the trace shows none", Source: srcHere},
	{Name: "device", Unit: UnitObject, Definition: "deviceProperties entry of the primary device: id, name, compute_major, compute_minor, sm_count, total_memory_bytes; without deviceProperties, compute_major/minor as a lower bound read from the kernel names (volta_, ampere_, sm90_, ...) with compute_from the prefix", Source: srcDesign, Needs: []Need{NeedGPU, NeedDeviceProps}},
	{Name: "gpu_vendor", Unit: UnitID, Definition: "the primary GPU's maker, nvidia or amd: from the device name, else from the runtime calls (hip* on ROCm)", Source: srcHere, Needs: []Need{NeedGPU}},
	{Name: "has_backward", Unit: UnitBool, Definition: "the trace shows training: autograd backward events (autograd::engine::evaluate_function..., ...Backward0) or Optimizer.step/zero_grad spans; false for inference", Source: srcHere},
	{Name: "torch_compiled", Unit: UnitBool, Definition: "the trace shows torch.compile at all: Inductor triton_ kernels or compiled-region events (CompiledFunction, CompiledFxGraph, Torch-Compiled Region, TorchDynamo Cache Lookup); how much of the GPU work is compiled is compiled_kernel_ratio", Source: srcHere},
	{Name: "step_marker", Unit: UnitObject, Definition: "what marked the steps: source (profiler_step, regex from --step-marker, auto for --step-marker auto), pattern, engine (vllm, sglang, hf for auto), label, steps (outermost marker spans), prefill_steps and decode_steps (spans whose name says the phase); null without steps. Automatic markers, first found wins: SGLang step[DECODE bs=N] / step[PREFILL ...] annotations, vLLM execute_context_N(...)_generation_M(...) annotations, vLLM model_runner.py execute_model frames, SGLang scheduler.py run_batch frames, Hugging Face generation/utils.py generate frames (frames need with_stack)", Source: srcHere},
	{Name: "step_marker_found", Unit: UnitObject, Definition: "for a trace without steps: the automatic marker that --step-marker auto would use (fields as step_marker); null when none is found or the steps have a marker", Source: srcHere},
	{Name: "steps_count", Unit: UnitCount, Definition: "number of ProfilerStep#N spans (any CPU category, never the gpu_user_annotation copy); a span inside another (a nested or repeated ProfilerStep) is part of it", Source: srcDesign},
	{Name: "window_us", Unit: UnitUS, Definition: "|W|: the union of step spans (each extended to the end of the GPU work it launched, never past the next step's start); without steps, first start to last end of complete events", Source: srcDesign},
	{Name: "step_time_us", Unit: UnitStatsUS, Definition: "per-step duration: mean, p50, p90 (linear interpolation, numpy's default), max; the last step's GPU tail capped at the largest tail of the other steps (rev 3)", Source: srcDesign, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "step_time_cv", Unit: UnitRatio, Definition: "population standard deviation / mean of step durations, last step capped (0 for one step)", Source: srcDesign, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "last_step_drain_us", Unit: UnitUS, Definition: "GPU queue drain cut from the last step's duration for the step statistics: its GPU tail (end past its CPU end) beyond the largest tail of the other steps; 0 with one step; W keeps the drain", Source: srcDesign, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "gpu_busy_ratio", Unit: UnitRatio, Definition: "|union of primary-device kernel, memcpy and memset intervals clipped to W| / |W|", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: HigherBetter},
	{Name: "gpu_idle_ratio", Unit: UnitRatio, Definition: "1 - gpu_busy_ratio", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "batch_size", Unit: UnitCount, Definition: "samples per step: the leading dimension of the first tensor input (Input Dims) of the first aten operator on the step's thread after its DataLoader fetch, the value most steps agree on; diff compares time per sample when it differs", Source: srcHere, Needs: []Need{NeedSteps, NeedShapes}},
	{Name: "kernel_count", Unit: UnitCount, Definition: "primary-device kernels starting in W", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "kernels_per_step", Unit: UnitPerStep, Definition: "kernel_count / steps_count", Source: srcDesign, Needs: []Need{NeedGPU, NeedSteps}, Direction: LowerBetter},
	{Name: "kernel_launches_per_ms", Unit: UnitPerMS, Definition: "kernel_count per millisecond of W (launch density)", Source: srcDesign, Needs: []Need{NeedGPU}},
	{Name: "short_kernel_ratio", Unit: UnitRatio, Definition: "kernels under 10 us / kernel_count", Source: srcTB, Needs: []Need{NeedGPU, NeedKernels}, Direction: LowerBetter},
	{Name: "launch_bound_kernel_ratio", Unit: UnitRatio, Definition: "counted kernels whose launch call (cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ...; linked by correlation id) lasted at least as long as the kernel / kernels with such a launch", Source: srcDesign, Needs: []Need{NeedGPU, NeedLaunchLinks}, Direction: LowerBetter},
	{Name: "graph_launched_kernel_ratio", Unit: UnitRatio, Definition: "counted kernels whose launch is a CUDA/HIP Graph replay (cudaGraphLaunch, hipGraphLaunch) / kernels linked to any runtime call", Source: srcHere, Needs: []Need{NeedGPU, NeedLaunchLinks}, Direction: HigherBetter},
	{Name: "graph_launch_count", Unit: UnitCount, Definition: "CUDA/HIP Graph replays in W: cudaGraphLaunch / hipGraphLaunch calls (each replays a captured sequence of kernels that share its correlation id)", Source: srcTorch + " (CUDA Graphs)", Needs: []Need{NeedGPU}},
	{Name: "compiled_region_ratio", Unit: UnitRatio, Definition: "|union of the host spans that run torch.compile'd code, clipped to W| / |W|: Torch-Compiled Region: F/C (TorchDynamo), CompiledFunction / CompiledFunctionBackward (AOTAutograd), ## Call CompiledFxGraph ## (Inductor); 0 when the trace records host operators and none of these", Source: srcTorch + " (torch.compile profiling)"},
	{Name: "compiled_kernel_ratio", Unit: UnitRatio, Definition: "compute kernel time in W of kernels that torch.compile generated or launched (triton_ kernels, or a launch call inside a compiled-region span on its thread) / all compute kernel time in W; the rules call a trace compiled when this is at least half", Source: srcHere, Needs: []Need{NeedGPU, NeedKernels}},
	{Name: "triton_kernel_ratio", Unit: UnitRatio, Definition: "time of Inductor-generated kernels (names starting triton_: triton_poi_, triton_red_, triton_per_, triton_tem_) / all compute kernel time in W", Source: srcTorch + " (TorchInductor kernel names)", Needs: []Need{NeedGPU, NeedKernels}},
	{Name: "compile_time_ratio", Unit: UnitRatio, Definition: "|union of the \"<key> (dynamo_timed)\" spans (torch._dynamo compilation: _compile.compile_inner, compile_fx, ...) in W| / |W|: time spent compiling or recompiling inside the profiled window", Source: srcTorch + " (torch/_dynamo/utils.py dynamo_timed)", Direction: LowerBetter},
	{Name: "compiled_frame_count", Unit: UnitCount, Definition: "distinct frame ids F among the Torch-Compiled Region: F/C spans: every graph break resumes in a new frame compiled with its own id, so more than 1 means graph breaks or several compiled functions; null without such spans", Source: srcTorch + " (TorchDynamo CompileId)"},
	{Name: "recompile_count", Unit: UnitCount, Definition: "distinct (frame F, compile id C > 0) among the Torch-Compiled Region: F/C spans: recompilations of a frame after a guard failed (new shapes, dtypes, globals) that ran in the window; null without such spans", Source: srcTorch + " (TorchDynamo CompileId, TORCH_LOGS=recompiles)", Direction: LowerBetter},
	{Name: "memcpy_count", Unit: UnitCount, Definition: "primary-device memcpy events starting in W", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_per_step", Unit: UnitPerStep, Definition: "memcpy_count / steps_count", Source: srcDesign, Needs: []Need{NeedGPU, NeedSteps}, Direction: LowerBetter},
	{Name: "memcpy_htod_count", Unit: UnitCount, Definition: "memcpy whose name contains HtoD", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_dtoh_count", Unit: UnitCount, Definition: "memcpy whose name contains DtoH", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_dtod_count", Unit: UnitCount, Definition: "memcpy whose name contains DtoD", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_pageable_count", Unit: UnitCount, Definition: "memcpy whose name contains Pageable (a pageable host buffer)", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_pageable_htod_count", Unit: UnitCount, Definition: "host-to-device memcpy from pageable memory (what pin_memory=True fixes)", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_bytes", Unit: UnitBytes, Definition: "sum of args.bytes over counted memcpy (missing = 0)", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "memcpy_time_ratio", Unit: UnitRatio, Definition: "|union of memcpy intervals clipped to W| / |W|", Source: srcDesign, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "sync_per_step", Unit: UnitPerStep, Definition: "outermost host sync events starting in W per step (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, hip twins, aten::item, aten::_local_scalar_dense, and blocking copies: cudaMemcpy, hipMemcpy, hipMemcpyWithStream, a cudaMemcpyAsync/hipMemcpyAsync whose GPU copy (same correlation) touches Pageable memory; nested ones count once)", Source: srcDesign, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "device_sync_per_step", Unit: UnitPerStep, Definition: "of sync_per_step, the outermost syncs that wait on the device: a runtime sync call or blocking copy, or an aten::item / _local_scalar_dense that holds one (an .item() on a CPU tensor holds none); null without GPU runtime calls", Source: srcHere, Needs: []Need{NeedSteps, NeedGPU}, Direction: LowerBetter},
	{Name: "sync_time_ratio", Unit: UnitRatio, Definition: "|union of those outermost sync events clipped to W| / |W|: host time blocked in syncs", Source: srcHere, Direction: LowerBetter},
	{Name: "dataloader_time_ratio", Unit: UnitRatio, Definition: "|union of enumerate(DataLoader)#...__next__ spans clipped to W| / |W|", Source: srcTB, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "dataloader_single_process", Unit: UnitBool, Definition: "the DataLoader iterator is _SingleProcessDataLoaderIter (num_workers=0); null without DataLoader events", Source: srcDesign, Needs: []Need{NeedDataLoader}},
	{Name: "step_kernel_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role kernel (compute kernels) / |W|; roles in priority order kernel, memcpy, memset, communication, runtime, dataloader, cpu_op, other, each taking only time no earlier role claimed; without steps, the breakdown of the whole window W", Source: srcTB, Direction: HigherBetter},
	{Name: "step_memcpy_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role memcpy / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_memset_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role memset / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_communication_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role communication (" + commKernels + " and nccl:/gloo:/c10d::/symm_mem:: host calls) / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_runtime_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role runtime (CUDA/HIP runtime and driver calls) / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_dataloader_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role dataloader / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_cpu_op_ratio", Unit: UnitRatio, Definition: "per-step breakdown, role cpu_op (other host operators) / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "step_other_ratio", Unit: UnitRatio, Definition: "per-step breakdown, the rest of the step / |W|", Source: srcTB, Direction: LowerBetter},
	{Name: "slow_step_excess_role", Unit: UnitID, Definition: "the breakdown role in which the slowest step (capped duration) spent the most time beyond the median of the steps: what made it slow; null with fewer than 3 steps", Source: srcHere, Needs: []Need{NeedSteps}},
	{Name: "slow_step_excess_us", Unit: UnitUS, Definition: "that excess: the slowest step's time in slow_step_excess_role minus the steps' median in it", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "phase_breakdown", Unit: UnitObject, Definition: "the step breakdown per inference phase, when the iteration spans name it (vLLM execute_context_N(...)_generation_M(...): N prefill and M decode requests; SGLang step[PREFILL|EXTEND|DECODE|MIXED ...]): per phase (prefill, decode, mixed) spans, time_us (|union of its iterations, each extended to the end of the GPU work it launched and never past the next iteration's start, clipped to W|), window_ratio (time_us / |W|), roles_us (the breakdown roles kernel, memcpy, memset, communication, runtime, dataloader, cpu_op, other, each taking only time no earlier role claimed; they sum to time_us) and gpu_busy_ratio (the first four roles / time_us); with or without --step-marker auto; null when no span names a phase", Source: srcTB + " (step breakdown); " + srcHere},
	{Name: "gpu_idle_queued_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the work that ends the gap was already issued (its launch ended before the gap began, started before W, or is not in the trace): a GPU-side wait on a cross-stream or event dependency, a collective's peers, launch latency or work queued before the trace / |W|; the gpu_idle_* causes partition gpu_idle_ratio", Source: srcDesign + " rev 3; " + srcHTA + " (idle time breakdown: kernel wait)", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_launch_ratio", Unit: UnitRatio, Definition: "GPU idle in W inside the launch call (same correlation id) of the work that ends the gap / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_sync_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was in a host sync or blocking copy / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_dataloader_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was in enumerate(DataLoader)#...__next__ / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_warmup_ratio", Unit: UnitRatio, Definition: "GPU idle in W charged to one-off calls (context creation, lazy module loading, first allocator calls; see warmup_ratio), on the launching thread or as the launch of the next work / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_runtime_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was in other runtime/driver calls (cudaMalloc, cudaFree, hipFree, stream creation, launches of other work) / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_optimizer_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was in Optimizer.step / zero_grad / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_cpu_op_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was in other recorded operators (aten and others) / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_python_ratio", Unit: UnitRatio, Definition: "GPU idle in W while the launching thread of the next work was only in python_function frames (with_stack) / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_untraced_ratio", Unit: UnitRatio, Definition: "GPU idle in W with nothing recorded on the launching thread of the next work (untraced Python, work the profiler does not see) / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "idle_culprits", Unit: UnitObject, Definition: "per idle cause, the top 5 events the GPU waited on: name, calls, idle_us, site (innermost user Python frame with with_stack), scope (record_function region), op (for a runtime call: the outermost CPU operator around it, the autograd node on the backward thread), copy and copy_bytes (blocking copies), allocator (an allocator call), top_idle_us (the idle charged to the one event with most, us), for GPU work waited on (queued) launch and launch_delay_us (its launch call, and how long after it returned the work started, us) and stream_wait and stream_wait_us (the stream-wait call the launching thread made last before that launch with no launch between, and how long before the launch it returned, us), up to 3 examples", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}},
	{Name: "gpu_idle_queued_leading_ratio", Unit: UnitRatio, Definition: "the part of gpu_idle_queued_ratio before the first GPU activity in W: launched work queued behind GPU work the trace did not record (issued before it began, or on a stream or process it did not profile) / |W|", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_queued_sync_ratio", Unit: UnitRatio, Definition: "the part of gpu_idle_queued_ratio during which a host thread is blocked in an outermost host sync (host and GPU both wait) / |W|", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_leading_ratio", Unit: UnitRatio, Definition: "the primary GPU's idle before its first activity in W (the gap W begins with), queued or not / |W|", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_queued_latency_ratio", Unit: UnitRatio, Definition: "the part of gpu_idle_queued_ratio (leading part excluded) before work that started within 50 us of its launch call returning: launch latency, not a dependency / |W|", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "queued_sync_culprits", Unit: UnitObject, Definition: "the host syncs overlapping the GPU-side waits, most overlap first: name, calls, idle_us (overlap), site, scope, copy and copy_bytes for blocking copies", Source: srcHere, Needs: []Need{NeedGPU}},
	{Name: "gpu_idle_allocator_ratio", Unit: UnitRatio, Definition: "the part of gpu_idle_runtime_ratio charged to allocator calls (cudaMalloc, cudaFree, hipMalloc, hipFree, ...) / |W|", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "gpu_idle_cpu_op_oneoff_ratio", Unit: UnitRatio, Definition: "the part of gpu_idle_cpu_op_ratio inside one-off operator calls (a call lasting 20x the median of its name's calls in W, at least 50 ms or 1% of |W| and, under 50 ms or 5% of |W|, the first call of its name and shapes, all in one step, no host sync inside: warm-up such as the first allocation, cuDNN autotuning or a first GEMM shape) / |W|", Source: srcHere, Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "view_op_median_us", Unit: UnitUS, Definition: "median duration of the view-only operators in W (aten::view, aten::as_strided, aten::_unsafe_view, aten::alias: metadata, no kernel, no child op) on the thread with the most kernel launches (every thread without launches): the host's fixed cost of one dispatched op", Source: srcHere, Needs: []Need{NeedViewOps}, Direction: LowerBetter},
	{Name: "warmup_ratio", Unit: UnitRatio, Definition: "|union of one-off runtime/driver calls in W| / |W|: a non-sync call lasting at least 20x the median of its name's calls in W (or its name's only call) and at least 50 ms or 5% of |W|, all such slow calls of the name in one step", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "launch_delay_us", Unit: UnitStatsUS, Definition: "kernel start minus its launch call's end, clamped at 0 (a kernel may start before the call returns; one starting before the call begins is clock skew, a warning): mean, p50, p90, max", Source: srcHTA + " (kernel launch statistics)", Needs: []Need{NeedGPU, NeedLaunchLinks}, Direction: LowerBetter},
	{Name: "compute_kernel_time_ratio", Unit: UnitRatio, Definition: "|union of non-communication kernels of the primary device clipped to W| / |W|", Source: srcHTA, Needs: []Need{NeedGPU}, Direction: HigherBetter},
	{Name: "comm_kernel_time_ratio", Unit: UnitRatio, Definition: "|union of " + commKernels + " clipped to W| / |W|; 0 for a job of one rank (distributedInfo world_size 1) that ran kernels and no collective, null without collectives otherwise", Source: srcHTA + " (comm/comp overlap)", Needs: []Need{NeedCommKernels}, Direction: LowerBetter},
	{Name: "exposed_comm_ratio", Unit: UnitRatio, Definition: "communication kernel time not overlapped by compute kernels / |W|; 0 for a one-rank job as comm_kernel_time_ratio", Source: srcHTA, Needs: []Need{NeedCommKernels}, Direction: LowerBetter},
	{Name: "comm_overlap_ratio", Unit: UnitRatio, Definition: "communication time overlapped by compute kernels / communication time", Source: srcHTA, Needs: []Need{NeedCommKernels}, Direction: HigherBetter},
	{Name: "host_comm_time_ratio", Unit: UnitRatio, Definition: "|union of host-side collective calls (gloo:*, nccl:*, c10d::*, symm_mem::*, record_param_comms) on any thread, clipped to W| / |W|", Source: srcHere, Direction: LowerBetter},
	{Name: "host_comm_exposed_ratio", Unit: UnitRatio, Definition: "the part of host_comm_time_ratio that no other CPU operator overlaps / |W|", Source: srcHere, Direction: LowerBetter},
	{Name: "host_comm_top", Unit: UnitObject, Definition: "host-side collective calls by time in W: name, calls, time_us, threads (top 5)", Source: srcHere},
	{Name: "allreduce_per_step", Unit: UnitPerStep, Definition: "all-reduces per step: the all-reduce " + commKernels + " of the primary device in W, or host all-reduce calls of one layer (gloo:, nccl:, c10d:), whichever saw most", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "collective_stats", Unit: UnitObject, Definition: "collectives table of the primary device's " + commKernels + " in W, per kind (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast, reduce, other) and process group: group (c10d Process Group Name, or Process Group ID), group_desc, group_ranks, group_size (Group size, else world_size), intra_node (the group inside one node: ranks / GPUs in deviceProperties, torchrun placement), count, bytes (NCCL tests' size: max(In msg nelems, Out msg nelems) x dtype size from the c10d args on the kernel or its record_param_comms, else the first input tensor of the host collective around the launch, record_shapes), sized_count, sized_time_us, time_us (summed kernel time), exposed_us (their union not overlapped by compute kernels), algbw_gbps (bytes / kernel time of the sized calls) and busbw_gbps (algbw times the NCCL tests' factor with n = group_size: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; others 1; null for n < 2), ranks_busbw_gbps and ranks_count (several ranks analysed together: the largest rank's busbw, the last to arrive having waited least), most time first; empty for a one-rank job as comm_kernel_time_ratio", Source: "NCCL tests (PERFORMANCE.md: algbw, busbw); c10d ParamCommsUtils args", Needs: []Need{NeedGPU, NeedCommKernels}},
	{Name: "allocator_calls_per_step", Unit: UnitPerStep, Definition: "allocator runtime calls (cudaMalloc, cudaFree, hipMalloc, hipFree, ...) starting in W per step", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "memory_peak_allocated_bytes", Unit: UnitBytes, Definition: "peak Total Allocated of the primary device's [memory] events (Device Id; an event with only Device Type counts for the primary GPU); in the 2021 format (Bytes only) the peak of the running sum of Bytes from the trace start, raised by the least amount that keeps it non-negative: a lower bound, as the start value is unknown", Source: srcTorch + " (profile_memory)", Needs: []Need{NeedMemory}, Direction: LowerBetter},
	{Name: "memory_peak_ratio", Unit: UnitRatio, Definition: "memory_peak_allocated_bytes / the device's totalGlobalMem", Source: srcHere, Needs: []Need{NeedMemory, NeedDeviceProps}, Direction: LowerBetter},
	{Name: "memory_allocs_per_step", Unit: UnitPerStep, Definition: "[memory] allocations (Bytes > 0) in W per step", Source: srcHere, Needs: []Need{NeedMemory, NeedSteps}, Direction: LowerBetter},
	{Name: "memory_growth_bytes_per_step", Unit: UnitBytesPerStep, Definition: "least-squares slope of allocated bytes at each step's end, per step (positive: growing)", Source: srcHere, Needs: []Need{NeedMemory, NeedTwoSteps}, Direction: LowerBetter},
	{Name: "memory_reserved_at_peak_bytes", Unit: UnitBytes, Definition: "Total Reserved (the caching allocator's segments) of the [memory] event at which the primary device's allocated memory peaks", Source: srcTorch + " (CUDA semantics, memory management: memory_reserved)", Needs: []Need{NeedMemory, NeedReserved}, Direction: LowerBetter},
	{Name: "memory_reserved_at_peak_ratio", Unit: UnitRatio, Definition: "memory_reserved_at_peak_bytes / the device's totalGlobalMem", Source: srcHere, Needs: []Need{NeedMemory, NeedReserved, NeedDeviceProps}, Direction: LowerBetter},
	{Name: "memory_fragmentation_ratio", Unit: UnitRatio, Definition: "(reserved - allocated) / reserved at the allocated peak of the primary device: the share of reserved memory cached but not allocated", Source: srcTorch + " (CUDA semantics, memory management)", Needs: []Need{NeedMemory, NeedReserved}, Direction: LowerBetter},
	{Name: "memory_peak_op", Unit: UnitID, Definition: "the innermost CPU operator enclosing, on its thread, the [memory] allocation at which the primary device's allocated memory peaks", Source: srcHere, Needs: []Need{NeedMemory}},
	{Name: "fp32_matmul_time_ratio", Unit: UnitRatio, Definition: "share of matmul/conv kernel time (kernels under aten::mm, addmm, bmm, linear, convolution, ...) whose op ran in float32", Source: srcHere, Needs: []Need{NeedShapes}, Direction: LowerBetter},
	{Name: "tensor_core_kernel_time_ratio", Unit: UnitRatio, Definition: "share of kernel time in tensor-core kernels: by the launching matmul op's dtype (fp16/bf16/fp8) first, by kernel name (hmma, xmma, gmma, 1688, 16816, tf32, bf16, mfma, ...) second", Source: srcHere, Needs: []Need{NeedGPU}, Direction: HigherBetter},
	{Name: "top_kernel_name", Unit: UnitID, Definition: "the compute kernel (not one of the " + commKernels + ") with the largest summed duration in W", Source: srcHere, Needs: []Need{NeedGPU, NeedCompute}},
	{Name: "top_kernel_share", Unit: UnitRatio, Definition: "that kernel's summed duration / the summed duration of all compute kernels in W", Source: srcHere, Needs: []Need{NeedGPU, NeedCompute}},
	{Name: "top_kernel_time_ratio", Unit: UnitRatio, Definition: "|union of that kernel's intervals clipped to W| / |W|", Source: srcHere, Needs: []Need{NeedGPU, NeedCompute}, Direction: LowerBetter},
	{Name: "fp32_matmul_kernel_time_ratio", Unit: UnitRatio, Definition: "fp32 matmul/conv kernel time in W / |W|: kernels under aten mm/bmm/addmm/baddbmm/linear/matmul/conv*/scaled-dot-product ops whose Input type is float, or, without a recorded dtype, kernels named as fp32 GEMMs (sgemm without tf32/1688/tensorop/xmma); communication kernels excluded", Source: srcDesign + " rev 3", Needs: []Need{NeedGPU}, Direction: LowerBetter},
	{Name: "device_peak", Unit: UnitObject, Definition: "the primary device's row of the peak table (engine/facts/devices.go, vendor datasheets), matched by deviceProperties name and SM/CU count: name, dense peak FLOP/s for fp32, tf32, bf16, fp16, fp8, memory_bytes_per_s, compute_units, link and link_bytes_per_s (GPU-to-GPU interconnect per direction: half the datasheet's bidirectional NVLink / Infinity Fabric / PCIe figure; 0 when unknown), source", Source: srcHere, Needs: []Need{NeedGPU, NeedDeviceProps, NeedDevicePeak}},
	{Name: "modelled_kernel_time_ratio", Unit: UnitRatio, Definition: "kernel time of the modelled ops (outermost matmul/conv/attention/softmax/norm/elementwise operators with shapes, their kernels and their descendants' linked by correlation and External id) / the primary device's kernel time in W", Source: srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedModelledOps}},
	{Name: "modelled_flops_per_s", Unit: UnitFLOPS, Definition: "achieved FLOP/s of the modelled ops with FLOPs (matmul, conv, attention): their FLOPs from Input Dims / their kernel time", Source: srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedModelledOps}, Direction: HigherBetter},
	{Name: "kernel_peak_flops_ratio", Unit: UnitRatio, Definition: "kernel-time-weighted share of peak of the modelled ops with FLOPs: sum of FLOPs / the dtype's peak (fp32 against TF32 where the device has it) over their kernel time", Source: "TraceLens roofline; " + srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedDevicePeak, NeedModelledOps}, Direction: HigherBetter},
	{Name: "kernel_roofline_ratio", Unit: UnitRatio, Definition: "time the modelled ops would take at the roofline (max(FLOPs / peak, bytes / bandwidth)) / their kernel time: the share of attainable reached", Source: "TraceLens roofline; " + srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedDevicePeak, NeedModelledOps}, Direction: HigherBetter},
	{Name: "roofline_kinds", Unit: UnitObject, Definition: "per op kind (gemm, conv_fwd, conv_bwd, attention_fwd, attention_bwd, softmax, norm, elementwise, fused_pointwise): calls, kernel_us, kernel_share, flops, bytes, flops_per_s, bytes_per_s, intensity (FLOP/byte), bound (compute or memory), peak_ratio, roofline_ratio", Source: srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedModelledOps}},
	{Name: "roofline_ops", Unit: UnitObject, Definition: "the top 10 modelled op signatures (name, Input Dims, dtype) by kernel time: calls, kernel_us, kernel_share, time_ratio (of W), per-call flops and bytes, flops_per_s, bytes_per_s, intensity, bound, peak_flops_per_s and peak_dtype, peak_ratio, roofline_ratio, tiles (128x128 output tiles) vs compute_units, misaligned, causal, fused (attention)", Source: srcHere, Needs: []Need{NeedGPU, NeedShapes, NeedModelledOps}},
	{Name: "optimizer_time_ratio", Unit: UnitRatio, Definition: "|union of Optimizer.step#... and Optimizer.zero_grad#... spans clipped to W| / |W|", Source: srcHere, Needs: []Need{NeedOptimizer}, Direction: LowerBetter},
	{Name: "zero_grad_fill_per_step", Unit: UnitPerStep, Definition: "aten::zero_ calls inside Optimizer.zero_grad per step (set_to_none=False), one per gradient: a zero_ inside another (the 2020 profiler recorded each twice) is not counted", Source: srcTorch + " (Optimizer.zero_grad)", Needs: []Need{NeedZeroGrad, NeedSteps}, Direction: LowerBetter},
	{Name: "optimizer_single_tensor", Unit: UnitBool, Definition: "the optimizer step runs per-parameter ops and no aten::_foreach_*/_fused_* ops; false for an optimizer class named Fused* (apex, DeepSpeed, torchrec: their own multi-tensor kernels)", Source: srcTorch + " (foreach/fused optimizers)", Needs: []Need{NeedOptimizerStep}},
	{Name: "optimizer_ops_per_step", Unit: UnitPerStep, Definition: "operators directly inside Optimizer.step per step", Source: srcHere, Needs: []Need{NeedOptimizerStep, NeedSteps}, Direction: LowerBetter},
	{Name: "optimizer_class", Unit: UnitID, Definition: "the optimizer class whose Optimizer.step#CLASS.step spans take the most time in W (SGD, AdamW, ...)", Source: srcTorch + " (torch.optim.Optimizer profiling hooks)", Needs: []Need{NeedOptimizerStep}},
	{Name: "step_time_max_over_p50", Unit: UnitRatio, Definition: "slowest step / median step (may exceed 1)", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "first_step_time_ratio", Unit: UnitRatio, Definition: "the first step's duration / |W| (warm-up measured as work)", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "repeated_small_op_calls_per_step", Unit: UnitPerStep, Definition: "calls per step of the top-level host operator called most often among those with a mean duration under 20 us", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "repeated_small_op_time_ratio", Unit: UnitRatio, Definition: "time in that operator's calls / |W|", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "repeated_small_op_name", Unit: UnitID, Definition: "the name of that most-called short top-level operator", Source: srcHere, Needs: []Need{NeedSteps}},
	{Name: "gpu_activity_missing", Unit: UnitBool, Definition: "no GPU activity although the trace shows a GPU job: kernel launch calls in W, deviceProperties entries (not of an unsupported accelerator such as MTIA), nccl: host collectives, or a distributedInfo backend nccl (CUDA activity not captured, or the file was cut)", Source: srcHere},
	{Name: "gpu_activity_missing_reason", Unit: UnitID, Definition: "what showed the GPU job when gpu_activity_missing: the launch calls, the deviceProperties GPUs (with their name when they share one), the nccl: spans or the nccl backend; null otherwise", Source: srcHere},
	{Name: "orphan_launch_ratio", Unit: UnitRatio, Definition: "launch calls in W whose correlation id has no GPU event / launch calls in W", Source: srcHere, Needs: []Need{NeedLaunchCalls}, Direction: LowerBetter},
	{Name: "trace_bytes_per_step", Unit: UnitBytesPerStep, Definition: "uncompressed trace bytes / steps_count", Source: srcHere, Needs: []Need{NeedSteps}, Direction: LowerBetter},
	{Name: "rank_count", Unit: UnitCount, Definition: "ranks analyzed together (set by the engine)", Source: srcHere, Needs: []Need{NeedRanks}},
	{Name: "rank_step_time_over_median", Unit: UnitRatio, Definition: "this rank's mean step time / the median across ranks (may exceed 1)", Source: srcHere, Needs: []Need{NeedRanks, NeedSteps}, Direction: LowerBetter},
	{Name: "rank_compute_over_median", Unit: UnitRatio, Definition: "this rank's compute kernel time per step / the median across ranks (may exceed 1)", Source: srcHere, Needs: []Need{NeedRanks, NeedGPU}, Direction: LowerBetter},
	{Name: "rank_comm_over_median", Unit: UnitRatio, Definition: "this rank's communication kernel time per step / the median across ranks", Source: srcHere, Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "rank_collective_lateness_us", Unit: UnitUS, Definition: "mean over collectives of this rank's collective kernel start minus the earliest rank's (k-th collective of each rank, trace clocks)", Source: srcHTA + " (straggler analysis)", Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "rank_last_arrival_ratio", Unit: UnitRatio, Definition: "share of collectives this rank starts last, alone (the others wait for it inside NCCL; ranks that start together have no last)", Source: srcHere, Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "rank_collective_wait_ratio", Unit: UnitRatio, Definition: "sum over collectives of (latest rank's start - this rank's start) / |W|: time this rank waits for the last arrival", Source: srcHere, Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "ranks_collective_wait_ratio", Unit: UnitRatio, Definition: "median over ranks of rank_collective_wait_ratio: what fixing the straggler would win", Source: srcHere, Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "rank_straggler", Unit: UnitBool, Definition: "this rank starts at least half the collectives last; without collectives, it has the slowest compute, at least 5% over the median", Source: srcHTA + " (straggler analysis)", Needs: []Need{NeedRanks, NeedGPU}},
	{Name: "ranks_straggler", Unit: UnitID, Definition: "the rank number of the straggler (the rank whose rank_straggler is true), the same on every rank; null when no rank is", Source: srcHere, Needs: []Need{NeedRanks, NeedGPU}},
	{Name: "ranks_compute_spread_ratio", Unit: UnitRatio, Definition: "(max - min) / median of compute kernel time per step across ranks", Source: srcHere, Needs: []Need{NeedRanks, NeedGPU}, Direction: LowerBetter},
	{Name: "collective_skew_us", Unit: UnitStatsUS, Definition: "per collective, latest minus earliest start across ranks: mean, p50, p90, max", Source: srcHTA, Needs: []Need{NeedRanks, NeedCommKernels}, Direction: LowerBetter},
	{Name: "elementwise_chain_count", Unit: UnitCount, Definition: "maximal runs of 3 or more consecutive short (< 20 us) elementwise kernels on one stream (CPU-only traces: top-level pointwise aten ops on one thread)", Source: srcDesign, Direction: LowerBetter},
	{Name: "elementwise_chain_kernels", Unit: UnitCount, Definition: "kernels (or ops) in those chains", Source: srcDesign, Direction: LowerBetter},
	{Name: "elementwise_chain_time_ratio", Unit: UnitRatio, Definition: "summed duration of chain members / |W|", Source: srcDesign, Direction: LowerBetter},
	{Name: "elementwise_chain_top", Unit: UnitObject, Definition: "the 3 longest chains by summed duration: members, time_us, the operators that launched their kernels (GPU) or the ops (CPU), site (user Python frame, with_stack), scope (record_function region), example", Source: srcHere},
}

// CatalogueMarkdown writes the catalogue as the Markdown of docs/FACTS.md.
func CatalogueMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# Facts catalogue\n\nGenerated from `engine/facts/catalogue.go` by `go test ./engine/facts -update`; do not edit.\n\n")
	fmt.Fprintf(w, "Facts schema version %d. Units: `us` microseconds, `ratio` 0..1, `per_step` per ProfilerStep, `per_ms` per millisecond of the window W, `stats_us` an object {mean, p50, p90, max} in microseconds. A fact the trace cannot give is null; \"needs\" says what makes it available.\n\n", SchemaVersion)
	fmt.Fprintf(w, "| fact | unit | definition | source | needs |\n|---|---|---|---|---|\n")
	for _, d := range Catalogue {
		needs := d.NeedsText()
		if needs == "" {
			needs = "—"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Unit, strings.ReplaceAll(d.Definition, "|", "\\|"), d.Source, needs)
	}
}
