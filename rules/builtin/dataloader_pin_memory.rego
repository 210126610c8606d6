# METADATA
# title: DataLoader batches are not pinned for GPU copies
# description: |
#   **Why it matters.** Copies to the GPU from ordinary (pageable) memory are
#   staged by the driver through a pinned bounce buffer: they are slower and
#   block the host even with `non_blocking=True`. `pin_memory=True` makes the
#   DataLoader return batches in page-locked memory, so `x.to(device,
#   non_blocking=True)` runs as an asynchronous DMA that overlaps compute.
#
#   **Fix.**
#
#   ```python
#   loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
#   for x, y in loader:
#       x = x.to(device, non_blocking=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: The script uses CUDA (`.cuda()`, a `"cuda"`
#   device) or picks its device through `torch.accelerator`, and a
#   `DataLoader(...)` has no `pin_memory` or the literal `False`. Not
#   reported: a loader of token ids (a tokenized dataset, lightning's
#   WikiText2, a `Random*Token*Dataset`), whose batches are a few kilobytes
#   and copy in microseconds either way; and, in a script that trains, an
#   evaluation loader (named or built for val / eval / test / predict),
#   which slows evaluation, not the training step.
#   In a trace this shows as `Memcpy HtoD (Pageable -> Device)` copies
#   (`memcpy_pageable_htod_count`).
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 5% of step time (`impact`), with confidence "likely". With `stepdoctor analyze --script` the finding becomes confirmed and takes the copy share of step time (`memcpy_time_ratio`) when the trace shows pageable host-to-device copies.
# custom:
#   id: dataloader-pin-memory
#   severity: medium
#   category: script
#   requires: [dataloaders, features]
#   confidence: likely
#   params:
#     impact: 0.05
#   references:
#     - https://pytorch.org/docs/stable/data.html#memory-pinning
#     - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
#   trace:
#     same_cause: [pageable-memcpy]
#     stack_site: memcpy
#     confirms:
#       rule: pageable-memcpy
#       fact: memcpy_pageable_htod_count
#       at_least: min_pageable
#       impact: memcpy_time_ratio
#       shows: "{memcpy_pageable_htod_count} pageable host-to-device copies"
#       shows_impact: "; copies take {memcpy_time_ratio} of step time"
package stepdoctor.rules.dataloader_pin_memory

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["dataloader-pin-memory"]

finding contains f if {
	slib.device_script(input.features)
	some dl in input.dataloaders
	not dl.kwargs_splat
	slib.absent_or(dl.pin_memory, false)
	not dl.tokens
	not slib.eval_in_training(dl.eval, input.loops)
	f := {
		"msg": sprintf("DataLoader without pin_memory=True in a %s script: every batch is copied to the GPU from pageable memory, synchronously", [slib.device_word(input.features)]),
		"impact": params.impact,
		"location": slib.loc(dl),
	}
}

