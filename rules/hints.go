package rules

import (
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Profiler options that make facts available, used in NotEvaluated hints.
const (
	HintCUDA    = "re-profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
	HintSteps   = "profile with schedule=torch.profiler.schedule(wait=1, warmup=1, active=3) and call prof.step() every iteration"
	HintShapes  = "re-profile with record_shapes=True"
	HintStack   = "re-profile with with_stack=True"
	HintMemory  = "re-profile with profile_memory=True"
	HintDist    = "the trace has no distributedInfo: profile each rank of the torch.distributed job (tensorboard_trace_handler writes one file per rank)"
	HintDevice  = "the trace has no deviceProperties for the primary GPU: re-profile with ProfilerActivity.CUDA on PyTorch 1.9 or later"
	HintLoader  = "no DataLoader iteration (enumerate(DataLoader)#...__next__) was recorded: profile the loop that iterates the DataLoader, inside the profiled steps"
	HintLaunch  = "no kernel had a matching launch (cudaLaunchKernel) in the trace: re-profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] together"
	HintKernels = "no kernel of the primary device started inside the analysis window: profile steps that run GPU work"
	HintComm    = "no NCCL/RCCL communication kernel ran in the window (a single-process job has none); profile a rank of the distributed job with ProfilerActivity.CUDA"
	HintOptim   = "no Optimizer.step#... / Optimizer.zero_grad#... span was recorded (inference traces have none): profile training steps that call optimizer.step()"
)

// factNeeds says which capability each nullable fact depends on: "gpu"
// (CUDA activity), "steps" (ProfilerStep spans), or both.
var factNeeds = map[string][]string{
	"primary_device":            {"gpu"},
	"device":                    {"gpu"},
	"gpu_busy_ratio":            {"gpu"},
	"gpu_idle_ratio":            {"gpu"},
	"kernel_count":              {"gpu"},
	"kernels_per_step":          {"gpu", "steps"},
	"kernel_launches_per_ms":    {"gpu"},
	"short_kernel_ratio":        {"gpu"},
	"launch_bound_kernel_ratio": {"gpu"},
	"memcpy_count":              {"gpu"},
	"memcpy_per_step":           {"gpu", "steps"},
	"memcpy_htod_count":         {"gpu"},
	"memcpy_dtoh_count":         {"gpu"},
	"memcpy_dtod_count":         {"gpu"},
	"memcpy_pageable_count":     {"gpu"},
	"memcpy_bytes":              {"gpu"},
	"memcpy_time_ratio":         {"gpu"},
	"step_time_us":              {"steps"},
	"step_time_cv":              {"steps"},
	"sync_per_step":             {"steps"},
	"dataloader_time_ratio":     {"steps"},
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
	for _, name := range missing {
		explained := true
		switch name {
		case "has_gpu":
			add(HintCUDA)
		case "has_steps":
			add(HintSteps)
		case "has_shapes":
			add(HintShapes)
		case "has_stack":
			add(HintStack)
		case "has_memory":
			add(HintMemory)
		case "rank", "world_size":
			add(HintDist)
		default:
			explained = false
		}
		for _, need := range needsOf(name) {
			switch {
			case need == "gpu" && !f.HasGPU:
				add(HintCUDA)
			case need == "steps" && !f.HasSteps:
				add(HintSteps)
			case need == "profile_memory" && !f.HasMemory:
				add(HintMemory)
			case need == "record_shapes" && !f.HasShapes:
				add(HintShapes)
			default:
				continue
			}
			explained = true
		}
		if explained || strings.HasPrefix(name, "has_") {
			continue
		}
		// The capability is there but the fact is still null.
		switch name {
		case "device":
			add(HintDevice)
		case "dataloader_single_process", "dataloader_time_ratio":
			add(HintLoader)
		case "launch_bound_kernel_ratio":
			add(HintLaunch)
		case "kernel_count", "kernels_per_step", "kernel_launches_per_ms", "short_kernel_ratio":
			add(HintKernels)
		default:
			add(capabilityHint(name))
		}
	}
	return strings.Join(hints, "; ")
}

// needsOf returns what fact name depends on: factNeeds, else the Needs of
// its facts.Catalogue entry ("gpu", "steps", "profile_memory", ...).
func needsOf(name string) []string {
	if n, ok := factNeeds[name]; ok {
		return n
	}
	for _, d := range facts.Catalogue {
		if d.Name == name && d.Needs != "" {
			return strings.Split(d.Needs, ", ")
		}
	}
	return nil
}

// capabilityHint explains a null fact whose capabilities the trace has,
// from the other needs in its catalogue entry.
func capabilityHint(name string) string {
	for _, need := range needsOf(name) {
		switch need {
		case "communication kernels":
			return HintComm
		case "optimizer spans", "optimizer step spans", "zero_grad spans":
			return HintOptim
		case "deviceProperties":
			return HintDevice
		case "launch links":
			return HintLaunch
		case "DataLoader events":
			return HintLoader
		}
	}
	return "the trace does not contain the events " + name + " is derived from"
}
