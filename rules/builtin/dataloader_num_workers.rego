# METADATA
# title: DataLoader loads batches in the training process
# description: |
#   **Why it matters.** With `num_workers=0` (the default) the DataLoader reads,
#   decodes and augments every batch in the training process, between steps:
#   the GPU idles while the next batch is built. Worker processes build batches
#   in parallel and ahead of time (`prefetch_factor` batches each).
#
#   **Fix.**
#
#   ```python
#   loader = DataLoader(dataset, batch_size=64, shuffle=True,
#                       num_workers=4,            # start near the CPU cores per GPU
#                       pin_memory=True, persistent_workers=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `DataLoader(...)` call (through any import
#   alias) without `num_workers`, or with the literal `0`; a variable is trusted.
#   Not reported when `**kwargs` are passed, nor where workers buy nothing or
#   do harm: a dataset already in memory (`TensorDataset`, a tokenized
#   `datasets` result or one built from a tokenizer, a synthetic `Random...Dataset`,
#   a class whose `__getitem__` only returns `self.data[i]`, also one imported from
#   a module of the script's directory; the dataset is followed through
#   assignments and the returns of the script's functions), an evaluation loader
#   (assigned to or returned from a function named with val / eval / test /
#   predict), one batch drawn with `next(iter(DataLoader(...)))`, and an
#   `IterableDataset` of the script fed from `self.` state such as a replay buffer
#   (workers would sample stale copies of it). In a trace the same mistake shows as
#   `_SingleProcessDataLoaderIter` and a large `dataloader_time_ratio`; with
#   `analyze --script` the finding is then confirmed and ranked by that share.
#   The impact is a prior (`impact`), replaced by the measured DataLoader share
#   when joined with a trace.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 10% of step time (`impact`), with confidence "likely". With `stepdoctor analyze --script` the finding becomes confirmed and takes the DataLoader share of step time (`dataloader_time_ratio`) when the trace shows a single-process loader taking more than 5% of it.
# custom:
#   id: dataloader-num-workers
#   severity: medium
#   category: script
#   requires: [dataloaders]
#   confidence: likely
#   params:
#     impact: 0.1
#   references:
#     - https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-async-data-loading-and-augmentation
#   trace:
#     same_cause: [dataloader-bound, idle-gap-dataloader]
#     stack_site: dataloader
#     confirms:
#       rule: dataloader-bound
#       fact: dataloader_time_ratio
#       above: min_ratio
#       when: [dataloader_single_process]
#       impact: dataloader_time_ratio
#       shows: a single-process DataLoader taking {dataloader_time_ratio} of step time
package stepdoctor.rules.dataloader_num_workers

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["dataloader-num-workers"]

finding contains f if {
	some dl in input.dataloaders
	not dl.kwargs_splat
	zero_workers(dl.num_workers)
	dl.in_memory == ""
	not dl.eval
	not dl.one_batch
	not dl.live_source
	f := {
		"msg": sprintf("DataLoader %s: batches are built in the training process while %s waits; set num_workers > 0", [how(dl), waiter]),
		"impact": params.impact,
		"location": slib.loc(dl),
	}
}

# waiter is what stalls while the main process builds a batch.
waiter := "the GPU" if slib.uses_gpu(input.features)
else := "the training step"

zero_workers(v) if slib.absent_or(v, 0)

zero_workers(v) if slib.defaults_to(v, 0)

how(dl) := "has no num_workers (default 0)" if not dl.num_workers.present

else := sprintf("sets num_workers=%s, whose command-line default is 0", [dl.num_workers.text]) if slib.defaults_to(dl.num_workers, 0)

else := "sets num_workers=0"
