# METADATA
# title: DataLoader workers restart every epoch
# description: |
#   **Why it matters.** Without `persistent_workers=True`, the DataLoader
#   shuts its worker processes down at the end of every pass and starts new ones
#   at the next: each epoch begins with process start-up, dataset pickling and
#   an empty prefetch queue, so the first steps of every epoch wait for data.
#
#   **Fix.**
#
#   ```python
#   loader = DataLoader(dataset, batch_size=64, num_workers=8,
#                       pin_memory=True, persistent_workers=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: A `DataLoader(...)` with `num_workers` other than
#   the literal `0`, without `persistent_workers=True`, assigned to a name that a
#   loop nested in another loop (epochs) iterates, or that a loop passes to a
#   function of the script that loops over batches (`for epoch in ...:
#   train(train_loader, ...)`, the way most scripts are written).
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 1% of step time (`impact`), with confidence "likely".
# custom:
#   id: dataloader-persistent-workers
#   severity: low
#   category: script
#   requires: [dataloaders, loops, calls, functions]
#   confidence: likely
#   params:
#     impact: 0.01
#   references:
#     - https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-async-data-loading-and-augmentation
#   trace:
#     same_cause: [dataloader-bound, idle-gap-dataloader]
#     stack_site: dataloader
package stepdoctor.rules.dataloader_persistent_workers

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["dataloader-persistent-workers"]

# restarted(dl) holds for a DataLoader with worker processes that are not
# kept between passes.
restarted(dl) if {
	not dl.kwargs_splat
	dl.num_workers.present
	not slib.literal(dl.num_workers, 0)
	not slib.defaults_to(dl.num_workers, 0)
	slib.absent_or(dl.persistent_workers, false)
	dl.var != ""
}

# nested(dl) holds when a loop inside another loop iterates dl.
nested(dl) if {
	some l in input.loops
	l.over_loader
	l.iter == dl.var
	l.parent >= 0
}

finding contains f if {
	some dl in input.dataloaders
	restarted(dl)
	nested(dl)
	f := {
		"msg": sprintf("DataLoader %s uses worker processes without persistent_workers=True: they are restarted at every epoch", [dl.var]),
		"impact": params.impact,
		"location": slib.loc(dl),
	}
}

# passes contains [line, call, function] for each call in a loop that hands
# dl to a function of the script with a loop over batches in it.
passes(dl) := {[c.line, c, fn] |
	some c in input.calls
	c.loop >= 0
	passed(c, dl.var)
	some fn in input.functions
	fn.name == c.name
	batches_in(fn)
}

passed(c, v) if {
	some a in c.args
	a.text == v
}

passed(c, v) if {
	some _, a in c.keywords
	a.text == v
}

batches_in(fn) if {
	some l in input.loops
	l.kind == "for"
	l.over_loader
	fn.line <= l.line
	l.line <= fn.end_line
}

finding contains f if {
	some dl in input.dataloaders
	restarted(dl)
	not nested(dl)
	p := min(passes(dl))
	c := p[1]
	f := {
		"msg": sprintf("DataLoader %s uses worker processes without persistent_workers=True: %s() iterates it on every pass of the loop at line %d, so its workers are restarted each time", [dl.var, c.name, input.loops[c.loop].line]),
		"impact": params.impact,
		"location": slib.loc(dl),
	}
}
