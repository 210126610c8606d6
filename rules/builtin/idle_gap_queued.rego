# METADATA
# title: GPU waits with its next work already queued
# description: |
#   **Why it matters.** The GPU sits idle although the work that ends the
#   gap was already issued: its launch call had returned before the GPU went
#   idle. The GPU is waiting on something other than the host's launches: a
#   cross-stream or event dependency (a copy stream, `wait_stream`,
#   `record_event`), a collective waiting for its peers, or work issued
#   before the trace began. When a host thread is blocked in a sync or a
#   blocking copy meanwhile, both sides wait on each other every step: the
#   classic stall is a device-to-host copy into pageable memory (`.cpu()`,
#   `.item()`, `.tolist()`) that waits behind the queued work.
#
#   **How to confirm.** In the trace viewer, find the gaps on the GPU rows;
#   the kernel that ends each gap has a flow arrow from a launch that
#   returned long before. The host row shows the blocking call (the culprit
#   named in the finding) spanning the gap.
#
#   **Fix.** Take the blocking call off the critical path and let the copy
#   run asynchronously:
#
#   ```python variant=default
#   # copy into pinned memory without blocking, and wait only when needed
#   host_buf = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True)
#   host_buf.copy_(t, non_blocking=True)
#   done = torch.cuda.Event(); done.record()
#   ...                       # launch the next step's work first
#   done.synchronize()        # then read host_buf
#   ```
#
#   Check cross-stream dependencies (`torch.cuda.Stream.wait_stream`,
#   `wait_event`) and collectives on side streams; with several ranks, a
#   straggler makes the others wait.
#
#   When waits fill most (`min_outside_ratio`) of a trace without steps, the work they wait
#   for is not in the trace (an event recorded by a stream or process the
#   profiler did not see, or work issued before it started), and the
#   blocking copy is where the host noticed, not the cause:
#
#   ```python variant=outside-window
#   # profile several iterations in steady state, so the producer is in the trace
#   from torch.profiler import profile, schedule, ProfilerActivity
#   with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
#                schedule=schedule(wait=2, warmup=2, active=5)) as prof:
#       for _ in range(9):
#           step()          # one decode / forward iteration
#           prof.step()
#   # then look for cudaStreamWaitEvent / hipStreamWaitEvent before the gap
#   ```
#
#   **Impact estimate.** The GPU-side wait that is neither before the first
#   GPU activity nor launch latency (`gpu_idle_queued_ratio -
#   gpu_idle_queued_leading_ratio - gpu_idle_queued_latency_ratio`), or
#   the part of it during which a host thread is blocked in a sync
#   (`gpu_idle_queued_sync_ratio`), whichever is larger: measured directly,
#   disjoint from the other idle causes.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: idle-gap-queued
#   severity: high
#   category: host-overhead
#   requires: [has_gpu, kernel_count, gpu_idle_queued_ratio, gpu_idle_queued_leading_ratio, gpu_idle_queued_sync_ratio]
#   examples: idle_queued
#   params:
#     min_idle_ratio: 0.05
#     min_outside_ratio: 0.5
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
#     - https://pytorch.org/docs/stable/notes/cuda.html#cuda-streams
#     - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
#     - https://hta.readthedocs.io/en/latest/source/features/idle_time_breakdown.html
package stepdoctor.rules.idle_gap_queued

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["idle-gap-queued"]

# Launch latency (work that started soon after its launch returned) is the
# launch path's, not a dependency: launch-bound's pattern, not this rule's.
steady := max([0, (input.gpu_idle_queued_ratio - input.gpu_idle_queued_leading_ratio) - lib.num(input.gpu_idle_queued_latency_ratio)])

blocked := input.gpu_idle_queued_sync_ratio

impact := max([steady, blocked])

confidence := "confirmed" if blocked >= steady
else := "likely"

host_note := sprintf(", while the host blocks in %s", [culprit(input.queued_sync_culprits[0])]) if {
	blocked >= params.min_idle_ratio
	input.queued_sync_culprits[0]
} else := ""

# culprit names a queued-sync entry; its time is overlap with the wait.
culprit(c) := concat("", [
	c.name,
	sprintf(" (%d %s, %s of it while the GPU waits%s)", [c.calls, lib.plural(c.calls, "call", "calls"), lib.dur(c.idle_us), lib.per_step(c.idle_us)]),
	lib.copy_note(c), lib.scope_note(c), lib.site_note(c),
])

next_note := sprintf("; the GPU waits to run %s%s%s", [q.name, launch_note(q), wait_note(q)]) if {
	q := input.idle_culprits.queued[0]
} else := ""

# wait_note names the stream-wait call the launching thread made just
# before the launch (facts idle_culprits stream_wait): the stream waits on
# an event that work outside this stream, or outside the trace, records.
wait_note(q) := sprintf("; just before that launch (%s earlier, no launch between) the thread called %s, so the stream waits on an event: find where that event is recorded", [lib.dur(q.stream_wait_us), q.stream_wait]) if {
	q.stream_wait
} else := ""

# launch_note says what launched the work the GPU waits to run and how long
# before it ran: a graph replay (cudaGraphLaunch / hipGraphLaunch) queues
# all its nodes at once, so a node waits inside the graph, on another
# stream or on the peers of a collective, not on the host.
launch_note(q) := sprintf(", a node of a graph launched by %s %s before it ran: the wait is inside the graph replay (a node waiting on another stream, an event or a collective's peers)", [q.launch, lib.dur(q.launch_delay_us)]) if {
	contains(q.launch, "GraphLaunch")
} else := sprintf(", launched by %s %s before it ran", [q.launch, lib.dur(q.launch_delay_us)]) if {
	q.launch
	q.launch_delay_us >= 1000
} else := ""

# outside: GPU-side waits cover most (min_outside_ratio) of a window
# without steps: what they wait for lies outside the trace.
outside if {
	not input.has_steps
	input.gpu_idle_queued_ratio >= params.min_outside_ratio
}

fix := "outside-window" if outside
else := "default"

outside_note := "; it fills most of a trace without steps, so what the GPU waits for is outside the trace: profile several iterations before changing the copy" if outside
else := ""

leading_note := sprintf("; %s of the wait comes before the first GPU activity: launched work queued behind GPU work the trace did not record (issued before it began, or on a stream or process it did not profile)", [lib.pct(input.gpu_idle_queued_leading_ratio)]) if {
	input.gpu_idle_queued_leading_ratio >= params.min_idle_ratio
} else := ""

finding contains f if {
	impact >= params.min_idle_ratio
	f := {
		"msg": sprintf("The GPU is idle %s %s with its next work already queued (a GPU-side wait: a cross-stream or event dependency, a collective's peers, or work issued earlier)%s%s%s%s", [
			lib.pct(input.gpu_idle_queued_ratio), lib.of_time, host_note, next_note, leading_note, outside_note,
		]),
		"impact": impact,
		"fix": fix,
		"confidence": confidence,
		"severity": lib.severity(impact, "high"),
		"evidence": [
			{"name": "gpu_idle_queued_ratio", "value": input.gpu_idle_queued_ratio, "unit": "ratio"},
			{"name": "gpu_idle_queued_sync_ratio", "value": blocked, "unit": "ratio"},
			{"name": "gpu_idle_queued_leading_ratio", "value": input.gpu_idle_queued_leading_ratio, "unit": "ratio"},
		],
	}
}
