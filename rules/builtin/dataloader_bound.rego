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
#   ```python
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
#   If workers are already in use and the share stays high, the per-sample
#   work (decoding, augmentation) is too slow for the GPU: move augmentation
#   to the GPU, cache decoded samples, or use a faster format.
#
#   **Impact estimate.** The DataLoader share of step time itself
#   (`dataloader_time_ratio`): with enough workers the fetch overlaps with
#   compute and leaves the critical path almost entirely. Confirmed: the
#   share is measured directly.
# custom:
#   id: dataloader-bound
#   severity: medium
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

finding contains f if {
	ratio := input.dataloader_time_ratio
	ratio > params.min_ratio
	single := input.dataloader_single_process == true
	f := {
		"msg": sprintf("DataLoader takes %s of step time%s", [lib.pct(ratio), detail(single)]),
		"impact": ratio,
		"severity": severity(single),
		"evidence": [
			{"name": "dataloader_time_ratio", "value": ratio, "unit": "ratio"},
			{"name": "dataloader_single_process", "value": to_number(single), "unit": "bool"},
		],
	}
}

severity(true) := "high"

severity(false) := "medium"

detail(true) := " (single-process iterator)"

detail(false) := ""
