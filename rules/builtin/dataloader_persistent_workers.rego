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
#   of the script's classes too, or a function of a module beside the
#   script that it imports, `from engine import train_one_epoch`) and loops
#   over the parameter that receives it (`for x, y in loader:`, also
#   through `metric_logger.log_every(loader, ...)`). A loader kept on `self` and looped over by a method that another
#   method calls from its epoch loop (`self.fit()` running
#   `self._run_epoch()`), and one built at module level (or in an enclosing
#   def) that a function loops over by name (`for epoch in range(200):
#   train(epoch)` with `for x, y in trainloader:` inside), count too. A
#   DataLoader built inside the loop is rebuilt at every pass anyway, and
#   left out, as is an outer loop known to run at most `few_passes` times
#   (`range(2)`, `range(args.epochs)` with a default of 2): a restart or two
#   in the whole run.
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
#     few_passes: 3
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

# nested(dl) holds when a loop inside another loop iterates dl (or, for
# a loader kept on self, self.<var>).
nested(dl) if {
	some l in input.loops
	l.over_loader
	l.iter in names(dl)
	l.parent >= 0
	not few(input.loops[l.parent])
}

# few(l) holds for a loop whose body is known to run at most few_passes
# times in all (its range() bounds and those of the loops around it
# known, loops[].runs): its loader restarts at most a couple of times in
# the whole run, seconds against the run.
few(l) if {
	l.runs > 0
	l.runs <= params.few_passes
}

# names(dl) are the texts that iterate dl: self.<name> for a loader kept
# on self, its name otherwise.
names(dl) := {concat("", ["self.", dl.var])} if dl.on_self

else := {dl.var}

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
	not few(input.loops[c.loop])
	some k, a in c.args
	a.text == dl.var
	[c.name, k] in iterated_at
} | {[c.line, c] |
	some c in input.calls
	c.loop >= 0
	not few(input.loops[c.loop])
	some name, a in c.keywords
	a.text == dl.var
	[c.name, name] in iterated_named
} | {[c.line, c] |
	some c in input.calls
	c.loop >= 0
	not few(input.loops[c.loop])
	c.receiver == "self"
	dl.on_self
	[c.name, concat("", ["self.", dl.var])] in iterated_self
} | {[c.line, c] |
	some c in input.calls
	c.loop >= 0
	not few(input.loops[c.loop])
	not dl.on_self
	[c.name, dl.var] in free_keys
	visible(dl, c.name)
}

# free_keys holds [call name, name] for the functions that loop over a
# name they neither take nor assign (the scanner's functions[].iterates
# past params and self.): a trainloader built at module level and looped
# over by train(epoch). A set, built once: each call is looked up in it.
free_keys contains [name, p] if {
	some fn in input.functions
	some p in fn.iterates
	not p in fn.params
	not startswith(p, "self.")
	some name in slib.call_names(fn)
}

# visible(dl, name) holds when the functions called name that loop over
# dl's name can read dl: it is built at module level, or in a def that
# holds them (a loader built in main() and read by a def nested in it).
visible(dl, _) if count(holders[[dl.line, dl.column]]) == 0

visible(dl, name) if name in closure_names[[dl.line, dl.column]]

# holders maps a loader's [line, column] to the [first, last] lines of the
# defs that hold it; closure_names to the names of the functions inside
# all of them that loop over its name. Each is built once per loader.
holders[[dl.line, dl.column]] := {[g.line, g.end_line] |
	some g in input.functions
	g.line <= dl.line
	dl.line <= g.end_line
} if some dl in input.dataloaders

closure_names[[dl.line, dl.column]] := {name |
	some fn in input.functions
	dl.var in fn.iterates
	every g in holders[[dl.line, dl.column]] {
		g[0] <= fn.line
		fn.end_line <= g[1]
	}
	some name in slib.call_names(fn)
} if {
	some dl in input.dataloaders
	count(holders[[dl.line, dl.column]]) > 0
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

# iterated_self holds [".method", "self.attr"] for the attributes of self
# a method loops over (directly or in a method it calls on self): a loader
# kept on self (self.train_loader) and driven by self.fit() from an epoch
# loop.

iterated_self contains [concat("", [".", fn.name]), p] if {
	some fn in input.functions
	count(fn.params) > 0
	fn.params[0] == "self"
	some p in fn.iterates
	startswith(p, "self.")
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
