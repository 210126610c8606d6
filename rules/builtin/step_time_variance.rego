# METADATA
# title: Some steps are much slower than the rest
# description: |
#   **Why it matters.** Steady training has steps of near-equal length. A
#   step 50% or more above the median (`min_max_over_p50` 1.5) is a stall:
#   checkpoint saving, logging or evaluation every N steps, Python garbage
#   collection, a DataLoader refilling its prefetch queue (or restarting
#   workers at an epoch boundary without `persistent_workers=True`),
#   recompilation (`torch.compile` with changing shapes), or allocator
#   retries near capacity. When the slowest step is the first one, the
#   profiled steps include warm-up (cuDNN autotuning, lazy initialisation,
#   compilation): that inflates the averages but is not a training cost.
#   Needs at least 3 steps (`min_steps`).
#
#   **How to confirm.** The report's per-step chart; in the trace viewer,
#   compare the slow `ProfilerStep#N` with a typical one and look at what
#   only it contains (a `torch.save`, an `aten::item` burst, a long
#   DataLoader `__next__`, a gap with nothing recorded: GC).
#
#   **Fix.**
#
#   ```python
#   # periodic host work off the critical path
#   if step % ckpt_every == 0:
#       threading.Thread(target=torch.save, args=(state_dict_cpu, path)).start()
#   # or torch.distributed.checkpoint.async_save(...)
#   gc.freeze()                                 # after model set-up; or gc.disable() + gc.collect() every N steps
#   loader = DataLoader(..., persistent_workers=True, prefetch_factor=4)
#   # warm-up: profile with schedule(wait=1, warmup=1, active=3)
#   ```
#
#   **Impact estimate.** (slowest step - median step) / total step time:
#   what the window would shrink by if the stall went away. Confirmed:
#   measured. When the slowest step is the first (warm-up), the impact is 0
#   and the severity low.
#
#   **Severity.** By impact: medium from 2%, low below (at most medium).
# custom:
#   id: step-time-variance
#   severity: medium
#   category: host-overhead
#   requires: [has_steps, step_time_us, step_time_max_over_p50, first_step_time_ratio]
#   examples: step
#   params:
#     min_steps: 3
#     min_max_over_p50: 1.5
#   references:
#     - https://pytorch.org/docs/stable/profiler.html#torch.profiler.schedule
#     - https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
#     - https://docs.python.org/3/library/gc.html#gc.freeze
package stepdoctor.rules.step_time_variance

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["step-time-variance"]

st := input.step_time_us

total := st.mean * input.steps_count

# The first step is the slowest when its share of the window equals the
# slowest step's (to rounding).
first_is_slowest if (input.first_step_time_ratio * total) >= st.max * 0.999

ms(us) := lib.fixed(round(us / 10) / 100, 2)

finding contains f if {
	input.steps_count >= params.min_steps
	r := input.step_time_max_over_p50
	r >= params.min_max_over_p50
	first_is_slowest
	f := {
		"msg": sprintf("The slowest step is the first (%s ms against a median of %s ms): warm-up inside the profiled steps; start profiling after warm-up with schedule(wait=1, warmup=1, active=3)", [ms(st.max), ms(st.p50)]),
		"impact": 0,
		"severity": "low",
		"evidence": evidence,
	}
}

# What made the slowest step slow: the breakdown role with the largest
# excess over the median step (slow_step_excess_role).
top_role := input.slow_step_excess_role

role_label := {
	"kernel": "GPU kernels", "memcpy": "copies", "memset": "memsets",
	"communication": "communication (a collective waits for a slower rank or the network)",
	"runtime": "CUDA/HIP runtime calls", "dataloader": "the DataLoader (its workers cannot keep up)",
	"cpu_op": "CPU operators", "other": "time no event recorded (checkpoint, logging, GC, Python)",
}

why := sprintf(": the extra %s ms is mostly %s (+%s ms)", [ms(st.max - st.p50), role_label[top_role], ms(input.slow_step_excess_us)]) if {
	role_label[top_role]
} else := ": a periodic stall (checkpoint, logging, GC, DataLoader refill)"

# Time in a role that another rule claims (DataLoader, communication, host
# operators) is that rule's impact; only unrecorded or kernel time is this
# rule's own.
own_role if top_role == null

own_role if top_role in {"other", "kernel"}

impact := max([0, min([1, (st.max - st.p50) / total])]) if own_role
else := 0

finding contains f if {
	input.steps_count >= params.min_steps
	r := input.step_time_max_over_p50
	r >= params.min_max_over_p50
	not first_is_slowest
	f := {
		"msg": sprintf("The slowest step takes %s ms, %sx the median of %s ms%s", [ms(st.max), lib.fixed(r, 1), ms(st.p50), why]),
		"impact": impact,
		"severity": lib.severity(impact, "medium"),
		"evidence": evidence,
	}
}

evidence := [
	{"name": "step_time_max_over_p50", "value": input.step_time_max_over_p50, "unit": "ratio"},
	{"name": "step_time_max_us", "value": st.max, "unit": "us"},
	{"name": "step_time_p50_us", "value": st.p50, "unit": "us"},
	{"name": "first_step_time_ratio", "value": input.first_step_time_ratio, "unit": "ratio"},
]
