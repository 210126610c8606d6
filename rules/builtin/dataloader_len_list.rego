# METADATA
# title: A DataLoader iterated in full to count its batches
# description: |
#   **Why it matters.** `len(list(loader))` builds a list of every batch the
#   loader yields: the whole dataset is read, transformed and collated again
#   (and held in memory at once), only to count it. Placed after the epoch's
#   loop to average the loss, it adds a second full pass of data loading to
#   every epoch, with no GPU work in it; on a loader without worker
#   processes that is as long as all the epoch's data loading.
#
#   **Fix.**
#
#   ```python
#   return total_loss / len(train_loader)   # batches, from the sampler: nothing is loaded
#   # an IterableDataset without __len__: count in the loop instead
#   for n, (x, y) in enumerate(train_loader, 1): ...
#   return total_loss / n
#   ```
#
#   **How to confirm.** What stepdoctor matches: `len(list(x))` or
#   `len(tuple(x))` (also of `iter(x)`, `enumerate(x)` or `tqdm(x)`),
#   `len([b for b in x])` and `sum(1 for _ in x)`, where `x` is a
#   DataLoader of the script (a name assigned from `DataLoader(...)`) or what
#   a step loop iterates over (`for src, tgt in tqdm(train_dl)`); in a script
#   that does not train, also a name whose last part is `loader` or
#   `dataloader` (`val_loader`, `self.test_dataloader`) and what a loop
#   calling the model iterates over. One finding per call. In a script that
#   trains, only the training loaders count: an extra pass over an evaluation
#   loader slows evaluation, not the training step. The fix counts the
#   batches in the loop over `x` the call follows, else reads `len(x)`. In a
#   trace of the epoch the extra pass shows as
#   `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__` (or its
#   multi-process twin) with no kernels between, after the last step.
#
#   **Impact estimate.** The script alone measures nothing, so the impact
#   is a prior: 10% of step time (`impact`), as a loader's share of it, with
#   confidence "likely".
# custom:
#   id: dataloader-len-list
#   severity: medium
#   category: script
#   requires: [calls, loops, dataloaders]
#   confidence: likely
#   params:
#     impact: 0.1
#   references:
#     - https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
#     - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-async-data-loading-and-augmentation
package stepdoctor.rules.dataloader_len_list

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["dataloader-len-list"]

# counted holds for the ways to count a loader by iterating it: [call, x]
# for len(list(x)) / len(tuple(x)) (also of iter(x), enumerate(x) or
# tqdm(x)), len([b for b in x]) and sum(1 for _ in x).
counted contains [c, x] if {
	some c in input.calls
	c.name == "len"
	count(c.args) == 1
	x := iterated(c.args[0].text)
}

# A generator argument is not among a call's args: its text is read.
counted contains [c, x] if {
	some c in input.calls
	c.name == "sum"
	m := regex.find_all_string_submatch_n(`^sum\(\s*1\s+for\s+[A-Za-z_]\w*\s+in\s+([A-Za-z_][\w.]*)\s*\)$`, c.text, 1)
	count(m) == 1
	x := m[0][1]
}

iterated(t) := m[0][2] if {
	m := regex.find_all_string_submatch_n(`^(list|tuple)\(\s*([A-Za-z_][\w.]*)\s*\)$`, t, 1)
	count(m) == 1
} else := m[0][3] if {
	m := regex.find_all_string_submatch_n(`^(list|tuple)\(\s*(iter|enumerate|tqdm|tqdm\.tqdm)\(\s*([A-Za-z_][\w.]*)\s*\)\s*\)$`, t, 1)
	count(m) == 1
} else := m[0][1] if {
	m := regex.find_all_string_submatch_n(`^\[\s*[A-Za-z_]\w*\s+for\s+[A-Za-z_]\w*\s+in\s+([A-Za-z_][\w.]*)\s*\]$`, t, 1)
	count(m) == 1
}

# loader(x) holds for a DataLoader of the script, a name that says it is
# one, or what a loop over batches iterates over. In a script that trains,
# evaluation loaders and loops are left out (they slow evaluation, not the
# training step), and so is a name alone.
loader(x) if {
	some dl in input.dataloaders
	dl.var == x
	not slib.eval_in_training(dl.eval, input.loops)
}

loader(x) if {
	not slib.trains(input.loops)
	regex.match(`(?i)(^|[._])(data)?loader$`, x)
}

loader(x) if {
	some l in input.loops
	l.kind == "for"
	l.iter == x
	batches_loop(l)
}

# batches_loop(l) holds for a step loop, or, in a script that does not
# train, a loop that calls the model.
batches_loop(l) if {
	l.step
	not slib.eval_in_training(l.eval, input.loops)
}

batches_loop(l) if {
	l.calls_model
	not slib.trains(input.loops)
}

finding contains f if {
	some [c, x] in counted
	loader(x)
	f := {
		"msg": sprintf("%s loads every batch of %s again, only to count them: a full extra pass of data loading; %s", [c.text, x, fix(c, x)]),
		"impact": params.impact,
		"location": {"line": c.line, "column": c.column, "end_line": c.end_line, "end_column": c.end_column},
	}
}

# fix(c, x) counts the batches in the loop over x the count follows (the
# epoch's loss averaged after it), else reads the loader's length: a count
# taken before the loop (steps for a scheduler) cannot come from it.
fix(c, x) := sprintf("count the batches in the loop at line %d (or use len(%s) where the dataset has a __len__)", [line, x]) if {
	line := max({l.line | some l in input.loops; l.kind == "for"; l.iter == x; batches_loop(l); l.line < c.line})
} else := sprintf("len(%s) gives the number of batches without loading any (for an IterableDataset without __len__, count them once and keep the number)", [x])
