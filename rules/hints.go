package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Profiler options that make facts available, used in NotEvaluated hints.
const (
	HintCUDA     = "no GPU activity in the trace: a CPU-only job has none; for a GPU job, re-profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
	HintSteps    = "profile with schedule=torch.profiler.schedule(wait=1, warmup=1, active=3) and call prof.step() every iteration"
	HintShapes   = "re-profile with record_shapes=True"
	HintStack    = "re-profile with with_stack=True"
	HintMemory   = "re-profile with profile_memory=True"
	HintDist     = "the trace has no distributedInfo: profile each rank of the torch.distributed job (tensorboard_trace_handler writes one file per rank)"
	HintDevice   = "the trace has no deviceProperties for the primary GPU: re-profile with ProfilerActivity.CUDA on PyTorch 1.9 or later"
	HintLoader   = "no DataLoader iteration (enumerate(DataLoader)#...__next__) was recorded: profile the loop that iterates the DataLoader, inside the profiled steps"
	HintLaunch   = "no kernel had a matching launch (cudaLaunchKernel) in the trace: re-profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] together"
	HintKernels  = "no kernel of the primary device started inside the analysis window: profile steps that run GPU work"
	HintCompute  = "no compute kernel of the primary device started inside the analysis window, only communication kernels (NCCL/RCCL): profile steps that run the model's GPU work"
	HintComm     = "no NCCL/RCCL communication kernel ran in the window: the GPUs exchanged nothing (a single-process job, or collectives on the host with gloo)"
	HintRanks    = "only one rank was given: analyze the traces of all ranks together (the directory tensorboard_trace_handler wrote, one file per rank)"
	HintTrain    = "the trace shows no backward pass nor optimizer step (inference): training rules do not apply"
	HintAccel    = "the device is not a CUDA or ROCm GPU: GPU rules do not apply to this accelerator"
	HintPeak     = "the primary GPU is not in the device peak table (engine/facts/devices.go: vendor datasheet peaks by deviceProperties name and SM/CU count), or the trace gives no device name: kernel efficiency needs the device's peak FLOP/s and bandwidth"
	HintModel    = "no matmul, convolution or attention operator with recorded shapes launched kernels in the window (record_shapes=True records Input Dims)"
	HintReserved = "the trace's [memory] events have no Total Reserved (the 2021 format, Bytes only): re-profile with profile_memory=True on a recent PyTorch"
	HintLegacy   = "the trace is the legacy autograd-profiler export of a PyTorch build without Kineto (torch.autograd.kineto_available() is False), which drops record_shapes, with_stack and profile_memory: re-profile with a PyTorch build that has Kineto (the pytorch.org wheels)"
	HintOptim    = "no Optimizer.step#... / Optimizer.zero_grad#... span was recorded (inference traces have none): profile training steps that call optimizer.step()"
)

// Hints for a single-rank job (world_size 1, a single-GPU server):
// there is nothing to re-profile.
const (
	HintCommSingle  = "a single-rank job (world_size 1): no GPU-to-GPU communication to check; with tensor or pipeline parallelism, profile every rank"
	HintRanksSingle = "a single-rank job (world_size 1): there are no other ranks to compare"
)

// HintMemoryEmpty explains a null memory fact of a trace recorded with
// profile_memory=True.
const HintMemoryEmpty = "the trace was recorded with profile_memory=True but holds no [memory] event of the primary GPU (a trimmed trace, or no allocation inside the window): profile a window that allocates, without trimming the trace"

// singleRank reports a job of one rank by its distributedInfo.
func singleRank(f *facts.Facts) bool { return f.WorldSize != nil && *f.WorldSize <= 1 }

// needHints names, for each capability a fact can need, the profiler
// option or trace content that provides it. Capabilities that a flag of
// the trace reports (flag set) are hinted only when the flag is false; the
// others explain a fact that is null although every flagged capability is
// there.
var needHints = map[facts.Need]struct {
	hint string
	flag func(*facts.Facts) bool
}{
	facts.NeedGPU:           {HintCUDA, func(f *facts.Facts) bool { return f.HasGPU }},
	facts.NeedSteps:         {HintSteps, func(f *facts.Facts) bool { return f.HasSteps }},
	facts.NeedMemory:        {HintMemory, func(f *facts.Facts) bool { return f.HasMemory }},
	facts.NeedShapes:        {HintShapes, func(f *facts.Facts) bool { return f.HasShapes }},
	facts.NeedCommKernels:   {HintComm, nil},
	facts.NeedOptimizer:     {HintOptim, nil},
	facts.NeedOptimizerStep: {HintOptim, nil},
	facts.NeedZeroGrad:      {HintOptim, nil},
	facts.NeedDeviceProps:   {HintDevice, func(f *facts.Facts) bool { return !f.HasGPU || f.Device != nil }},
	facts.NeedLaunchLinks:   {HintLaunch, nil},
	facts.NeedDataLoader:    {HintLoader, nil},
	facts.NeedKernels:       {HintKernels, nil},
	facts.NeedCompute:       {HintCompute, nil},
	facts.NeedDevicePeak:    {HintPeak, func(f *facts.Facts) bool { return !f.HasGPU || f.Device == nil || f.DevicePeak != nil }},
	facts.NeedModelledOps:   {HintModel, nil},
	facts.NeedReserved:      {HintReserved, nil},
	facts.NeedRanks:         {HintRanks, func(f *facts.Facts) bool { return f.RankCount != nil && *f.RankCount > 1 }},
}

// hintFor names the profiler option(s) that would make the missing facts
// available, given what the trace could tell (its capability flags).
func hintFor(missing []string, f *facts.Facts) string {
	var hints []string
	add := func(h string) {
		for _, x := range hints {
			if x == h {
				return
			}
		}
		hints = append(hints, h)
	}
	// What makes the rule not apply to this job comes before what would
	// let it run: an inference trace has no optimizer to profile, a
	// single-rank job no peers.
	for _, name := range missing {
		def, _ := facts.Lookup(name)
		switch {
		case f.HasGPU && !f.HasBackward && (name == "has_backward" || slices.Contains(def.Needs, facts.NeedOptimizer) ||
			slices.Contains(def.Needs, facts.NeedOptimizerStep) || slices.Contains(def.Needs, facts.NeedZeroGrad)):
			return HintTrain
		case singleRank(f) && slices.Contains(def.Needs, facts.NeedRanks):
			return HintRanksSingle
		case singleRank(f) && slices.Contains(def.Needs, facts.NeedCommKernels):
			return HintCommSingle
		}
	}
	// memoryEmpty: the memory facts are null although profile_memory was on.
	memoryEmpty := func(def facts.Def) bool {
		return f.HasMemory && f.HasGPU && slices.Contains(def.Needs, facts.NeedMemory) && f.MemoryPeakAllocatedBytes == nil
	}
	cuda := HintCUDA
	switch {
	case f.UnsupportedAccelerator != nil && *f.UnsupportedAccelerator != "":
		cuda = HintAccel // asking for CUDA activity would not help
	case f.GPUActivityMissing:
		cuda = HintGPUMissing // a GPU job, not a CPU-only one
	}
	if f.LegacyExport {
		// No profiler option helps: the export cannot carry them.
		for _, name := range missing {
			switch name {
			case "has_shapes", "has_stack", "has_memory":
				return HintLegacy
			}
			if def, ok := facts.Lookup(name); ok {
				for _, need := range def.Needs {
					switch need {
					case facts.NeedMemory, facts.NeedShapes:
						return HintLegacy
					}
				}
			}
		}
	}
	for _, name := range missing {
		explained := true
		switch name {
		case "has_gpu":
			add(cuda)
		case "has_steps":
			add(stepsHint(f))
		case "has_shapes":
			add(HintShapes)
		case "has_stack":
			add(HintStack)
		case "has_memory":
			add(HintMemory)
		case "has_backward":
			add(HintTrain)
		case "rank", "world_size":
			add(HintDist)
		default:
			explained = false
		}
		def, ok := facts.Lookup(name)
		if !ok {
			def.Name = name
		}
		if memoryEmpty(def) {
			add(HintMemoryEmpty)
			continue
		}
		if f.HasGPU && !f.HasBackward && f.DataloaderSingleProcess == nil && (slices.Contains(def.Needs, facts.NeedDataLoader) || name == "dataloader_time_ratio") {
			add(HintLoaderInference) // steps would not help: there is no DataLoader
			continue
		}

		for _, need := range def.Needs {
			if h, ok := needHints[need]; ok && h.flag != nil && !h.flag(f) {
				switch h.hint {
				case HintCUDA:
					add(cuda)
				case HintSteps:
					add(stepsHint(f))
				default:
					add(h.hint)
				}
				explained = true
			}
		}
		// Without GPU activity every GPU-derived fact is null for that
		// reason alone (communication kernels, launches, device properties).
		if !explained && !f.HasGPU && needsGPUEvents(def) {
			add(cuda)
			explained = true
		}
		if explained || strings.HasPrefix(name, "has_") {
			continue
		}
		// The capabilities are there but the fact is still null.
		h := capabilityHint(def)
		if h == HintCompute && (f.KernelCount == nil || *f.KernelCount == 0) {
			h = HintKernels // no kernel at all, communication or compute
		}
		add(h)
	}
	return strings.Join(hints, "; ")
}

// capabilityHint explains a null fact whose flagged capabilities the trace
// has, from the first other need in its catalogue entry.
func capabilityHint(def facts.Def) string {
	for _, need := range def.Needs {
		if h, ok := needHints[need]; ok && h.flag == nil {
			return h.hint
		}
	}
	return "the trace does not contain the events " + def.Name + " is derived from"
}

// HintGPUMissing explains null GPU facts of a GPU job recorded without
// its GPU activity (gpu_activity_missing).
const HintGPUMissing = "GPU activity was not recorded although the trace shows a GPU job (kernel launches, GPUs in deviceProperties or nccl: collectives): re-profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] (CUDA also covers ROCm)"

// HintLoaderInference explains a missing DataLoader on an inference trace.
const HintLoaderInference = "no DataLoader iteration was recorded: inference and serving loops feed batches without a DataLoader, so the input-pipeline rule does not apply"

// stepsHint says how to get steps into a trace that has none: the
// automatic marker the trace shows (--step-marker auto), else a marker of
// one's own, else prof.step() for a training loop.
func stepsHint(f *facts.Facts) string {
	if m := f.StepMarkerFound; m != nil {
		return fmt.Sprintf("the trace has no ProfilerStep#N but shows %d iteration span(s) of %s: rerun with --step-marker auto to get per-step facts", m.Steps, m.Label)
	}
	if f.HasGPU && !f.HasBackward {
		return "the trace has no ProfilerStep#N: name the host span of one iteration with --step-marker REGEX (a record_function label around each batch or forward call), or call prof.step() after each iteration"
	}
	return HintSteps + ", or name the span of one iteration with --step-marker REGEX"
}

// needsGPUEvents reports whether a fact is derived from GPU activity.
func needsGPUEvents(def facts.Def) bool {
	for _, n := range def.Needs {
		switch n {
		case facts.NeedGPU, facts.NeedCommKernels, facts.NeedKernels, facts.NeedLaunchLinks, facts.NeedDeviceProps:
			return true
		}
	}
	return false
}
