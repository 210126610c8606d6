# METADATA
# title: DataLoader is on the critical path
# description: |
#   **Why it matters.** Time the training loop spends inside
#   `enumerate(DataLoader)#...__next__` is time the GPU waits for the next
#   batch. With `num_workers=0` (the default, `_SingleProcessDataLoaderIter`)
#   every batch is read, decoded and collated in the training process itself,
#   serially with the forward and backward pass. Worker processes prepare the
#   next batches while the current one trains, so the fetch leaves the
#   critical path. The 5% threshold is the one the PyTorch TensorBoard
#   profiler plugin (torch-tb-profiler) uses for its DataLoader
#   recommendation.
#
#   **How to confirm.** In the trace viewer, look for long
#   `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__` (or
#   `_MultiProcessingDataLoaderIter`) spans at the start of each
#   `ProfilerStep#N`, with the GPU rows idle underneath. In torch-tb-profiler's
#   overview the "DataLoader" share of the step is the same number.
#
#   **Fix.** Load in worker processes, keep them alive across epochs, pin
#   host memory and prefetch:
#
#   ```python variant=default
#   loader = torch.utils.data.DataLoader(
#       dataset,
#       batch_size=batch_size,
#       shuffle=True,
#       num_workers=min(8, os.cpu_count()),  # > 0: load in worker processes
#       persistent_workers=True,              # keep workers between epochs
#       pin_memory=True,                      # page-locked batches for fast H2D copies
#       prefetch_factor=4,                    # batches prepared ahead per worker
#   )
#   for x, y in loader:
#       x = x.to(device, non_blocking=True)
#       y = y.to(device, non_blocking=True)
#   ```
#
#   On a CPU-only job there is no device copy to pin memory for; the
#   workers still overlap loading with compute:
#
#   ```python variant=cpu
#   loader = torch.utils.data.DataLoader(
#       dataset,
#       batch_size=batch_size,
#       shuffle=True,
#       num_workers=min(4, os.cpu_count() // 2),  # leave cores for the compute threads
#       persistent_workers=True,
#       prefetch_factor=4,
#   )
#   torch.set_num_threads(os.cpu_count() // 2)    # intra-op threads for the model
#   ```
#
#   If workers are already in use and the share stays high, the per-sample
#   work (decoding, augmentation) is too slow for the GPU: move augmentation
#   to the GPU, cache decoded samples, or use a faster format.
#
#   **Impact estimate.** The GPU idle time spent while the launching thread
#   was inside the DataLoader (`gpu_idle_dataloader_ratio`): what leaves the
#   critical path once workers prefetch. Loading that overlaps with queued
#   GPU work costs nothing and is not counted. In CPU-only traces the whole
#   DataLoader share counts. Confirmed: both shares are measured. The
#   message still shows the DataLoader's whole share of the step.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
#
#   **Relation to idle-gap-dataloader.** This rule owns GPU idle time spent
#   in the DataLoader whenever `dataloader_time_ratio` exceeds `min_ratio`;
#   idle-gap-dataloader reports that idle time only when this rule does not
#   (no ProfilerStep spans, or a small DataLoader share), so it is never
#   counted twice.
# custom:
#   id: dataloader-bound
#   severity: high
#   category: input-pipeline
#   requires: [dataloader_time_ratio]
#   examples: dataloader
#   params:
#     min_ratio: 0.05
#   references:
#     - https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-async-data-loading-and-augmentation
#     - https://github.com/pytorch/kineto/tree/main/tb_plugin
package stepdoctor.rules.dataloader_bound

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["dataloader-bound"]

# claims: this rule owns the GPU idle time spent in the DataLoader.
claims if input.dataloader_time_ratio > params.min_ratio

# The GPU idle time the DataLoader causes; all of the DataLoader share when
# the trace has no GPU.
impact := input.gpu_idle_dataloader_ratio if input.gpu_idle_dataloader_ratio != null
else := input.dataloader_time_ratio

fix := "cpu" if lib.cpu_job
else := "default"

finding contains f if {
	claims
	ratio := input.dataloader_time_ratio
	f := {
		"msg": sprintf("DataLoader takes %s %s%s%s%s", [lib.pct(ratio), lib.of_time, detail, waits, workers]),
		"impact": impact,
		"fix": fix,
		"severity": lib.severity(impact, "high"),
		"evidence": evidence,
	}
}

# With a single-process iterator, __next__ is the load time of one batch:
# n workers keep up when each loads a batch within n steps of the rest of
# the work, n >= load / (step - load). The impact is the ceiling with
# perfect prefetch.
workers := sprintf("; that is the most prefetching can give back: with each batch loading in %s against %s of other work per step, num_workers=%d keeps up (more for augmentation spikes)", [
	lib.dur(load), lib.dur(other), max([2, ceil(load / other)]),
]) if {
	input.dataloader_single_process == true
	input.step_time_us.mean > 0
	load := input.dataloader_time_ratio * input.step_time_us.mean
	other := input.step_time_us.mean - load
	other > 0
} else := ""

# load and other are the per-step load time and the rest of the step (us).
load := input.dataloader_time_ratio * input.step_time_us.mean

other := input.step_time_us.mean - load

detail := " (single-process iterator, num_workers=0)" if input.dataloader_single_process == true
else := ""

waits := sprintf("; the GPU waits on it %s %s", [lib.pct(input.gpu_idle_dataloader_ratio), lib.of_time]) if input.gpu_idle_dataloader_ratio != null
else := ""

evidence := [
	{"name": "dataloader_time_ratio", "value": input.dataloader_time_ratio, "unit": "ratio"},
	{"name": "gpu_idle_dataloader_ratio", "value": input.gpu_idle_dataloader_ratio, "unit": "ratio"},
] if input.gpu_idle_dataloader_ratio != null
else := [{"name": "dataloader_time_ratio", "value": input.dataloader_time_ratio, "unit": "ratio"}]
