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
#   train(train_loader, ...)`, the way most scripts are written; a method
#   of the script's classes too) and loops over the parameter that receives
#   it. A
#   DataLoader built inside the loop is rebuilt at every pass anyway, and
#   left out.
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
	not built_in_loop(dl)
}

# built_in_loop(dl) holds for a DataLoader built inside a loop (a dataset
# rebuilt every epoch): persistent workers would not outlive it; the
# loader itself is rebuilt.
built_in_loop(dl) if {
	some c in input.calls
	c.line == dl.line
	c.column == dl.column
	c.loop >= 0
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

# passes(dl) contains [line, call] for each call in a loop that hands dl
# to a function (or a method, past its self) of the script that loops over
# the parameter receiving it (the scanner's functions[].iterates, one
# hand-off deep). Looked up in sets built once: a script of a thousand
# functions and calls is not a thousand squared.
passes(dl) := {[c.line, c] |
	some c in input.calls
	c.loop >= 0
	some k, a in c.args
	a.text == dl.var
	[c.name, k] in iterated_at
} | {[c.line, c] |
	some c in input.calls
	c.loop >= 0
	some name, a in c.keywords
	a.text == dl.var
	[c.name, name] in iterated_named
}

# iterated_at holds [call name, argument position] for the parameters a
# function iterates: "name" for a plain call, ".name" for a method call
# (positions past self).
iterated_at contains [fn.name, i] if {
	some fn in input.functions
	some i, p in fn.params
	p in fn.iterates
}

iterated_at contains [concat("", [".", fn.name]), i - 1] if {
	some fn in input.functions
	count(fn.params) > 0
	fn.params[0] == "self"
	some i, p in fn.params
	i > 0
	p in fn.iterates
}

iterated_named contains [fn.name, p] if {
	some fn in input.functions
	some p in fn.iterates
}

iterated_named contains [concat("", [".", fn.name]), p] if {
	some fn in input.functions
	count(fn.params) > 0
	fn.params[0] == "self"
	some p in fn.iterates
}

finding contains f if {
	some dl in input.dataloaders
	restarted(dl)
	not nested(dl)
	p := min(passes(dl))
	c := p[1]
	f := {
		"msg": sprintf("DataLoader %s uses worker processes without persistent_workers=True: %s() iterates it on every pass of the loop at line %d, so its workers are restarted each time", [dl.var, trim_prefix(c.name, "."), input.loops[c.loop].line]),
		"impact": params.impact,
		"location": slib.loc(dl),
	}
}
