# METADATA
# title: Collectives far below the interconnect's bandwidth
# description: |
#   **Why it matters.** A collective that moves a large message inside one
#   node should run near the GPU-to-GPU link's bandwidth: the NCCL tests'
#   bus bandwidth (`busbw`, PERFORMANCE.md of nccl-tests) is defined so it
#   is comparable with the hardware's peak link bandwidth whatever the
#   number of ranks. A large all-reduce, all-gather or reduce-scatter far
#   below that peak means NCCL is not using the fast path: peer-to-peer
#   over NVLink disabled or unavailable (`NCCL_P2P_DISABLE`, containers
#   without IPC, a GPU topology through PCIe or the CPU), a forced
#   algorithm or protocol, too few channels, or a process group whose ranks
#   share a GPU.
#
#   The facts' collectives table (`collective_stats`) gives each kind and
#   process group its message size (the c10d args' element counts times
#   the dtype size, else `record_shapes`), algorithm bandwidth (bytes /
#   kernel time) and bus bandwidth (x 2(n-1)/n for all-reduce, (n-1)/n for
#   all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce).
#   The peak is the device's link bandwidth per direction in the device
#   table (`device_peak.link_bytes_per_s`, half the datasheet's
#   bidirectional NVLink, Infinity Fabric or PCIe figure). The rule fires
#   for the group with the most exposed time whose calls average at least
#   `min_message_bytes` (4 MiB: smaller messages are latency-bound in the
#   NCCL tests' curves), that lies inside one node (`intra_node`), and whose
#   bus bandwidth is under `max_peak_ratio` (25%) of the link peak, when
#   that group's exposed time is at least `min_exposed_ratio` (2%) of the
#   window. Thresholds are stepdoctor defaults.
#
#   One rank's kernel time includes waiting for the group's last rank, so
#   its bandwidth is a lower bound: the finding is likely. Analyzed with
#   the other ranks, the bandwidth is the best rank's
#   (`ranks_busbw_gbps`: the last to arrive waited least) and the finding
#   is confirmed.
#
#   **How to confirm.** Run the NCCL tests on the same node with the same
#   size and GPU count (`all_reduce_perf -b 32M -e 32M -g N`, N the group's
#   ranks on the node, in the message): their `busbw` is what the link gives. `NCCL_DEBUG=INFO` prints the transport of each channel
#   (`P2P/IPC`, `P2P/CUMEM` or `NVLS` is NVLink; `SHM` or `NET` is not);
#   `nvidia-smi topo -m` (`rocm-smi --showtopo`) shows the links.
#
#   **Fix.**
#
#   ```python variant=default
#   import os
#   # before init_process_group: NCCL prints each channel's transport
#   os.environ["NCCL_DEBUG"] = "INFO"               # "via P2P/IPC", P2P/CUMEM or NVLS: NVLink
#   os.environ["NCCL_DEBUG_SUBSYS"] = "INIT,GRAPH"  # "via SHM" or NET: not the GPU link
#   for k in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_ALGO", "NCCL_PROTO",
#             "NCCL_MAX_NCHANNELS", "NCCL_P2P_LEVEL"):
#       os.environ.pop(k, None)                     # nothing may force a slow path
#   torch.distributed.init_process_group("nccl")
#   # containers: docker run --ipc=host (peer-to-peer needs shared IPC)
#   # compare with the link: all_reduce_perf -b 32M -e 32M -g N (nccl-tests; N: the group's GPUs)
#   ```
#
#   **Impact estimate.** The group's exposed time (`exposed_us`, the part
#   no compute kernel overlaps) times (1 - bus bandwidth / link peak): what
#   the exposed time would shrink by at the link's peak. Never more than the
#   measured exposed communication; exposed-communication subtracts it, so
#   the two never count the same time.
#
#   **Severity.** By impact: high from 20%, medium from 2%, low below.
# custom:
#   id: slow-collective-bandwidth
#   severity: high
#   category: distributed
#   requires: [has_gpu, collective_stats, device_peak, window_us]
#   examples: comm
#   params:
#     min_message_bytes: 4194304
#     max_peak_ratio: 0.25
#     min_exposed_ratio: 0.02
#   references:
#     - https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
#     - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
#     - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
package stepdoctor.rules.slow_collective_bandwidth

import rego.v1

import data.stepdoctor.lib

params := data.stepdoctor.params["slow-collective-bandwidth"]

link := input.device_peak.link_bytes_per_s

# bw is a row's bus bandwidth (GB/s): the ranks' when several were
# analyzed together, else this rank's.
bw(r) := r.ranks_busbw_gbps if r.ranks_busbw_gbps != null
else := r.busbw_gbps

# slow holds each group that qualifies, with its impact.
slow contains [impact, i] if {
	link > 0
	input.window_us > 0
	some i, r in input.collective_stats
	r.intra_node == true
	r.busbw_gbps != null
	r.sized_count > 0
	r.bytes / r.sized_count >= params.min_message_bytes
	share := (bw(r) * 1e9) / link
	share < params.max_peak_ratio
	exposed := r.exposed_us / input.window_us
	exposed >= params.min_exposed_ratio
	impact := min([exposed * (1 - share), lib.num(input.exposed_comm_ratio)])
}

worst := max(slow)

# claim: the exposed communication time this rule owns (0 when it does not
# fire), read by exposed-communication.
claim := worst[0] if count(slow) > 0
else := 0

group(r) := sprintf("group %s (%s, %d ranks)", [r.group, r.group_desc, r.group_size]) if {
	r.group != ""
	r.group_desc != ""
} else := sprintf("group %s (%d ranks)", [r.group, r.group_size]) if {
	r.group != ""
} else := sprintf("%d ranks", [r.group_size])

mb(b) := sprintf("%s MB", [lib.fixed(round(b / 1e5) / 10, 1)])

ranks_note(r) := sprintf(", the best of %d ranks", [r.ranks_count]) if r.ranks_busbw_gbps != null
else := " on this rank (a lower bound: the kernel time includes waiting for the other ranks; analyze all ranks together for the transfer alone)"

confidence(r) := "confirmed" if r.ranks_busbw_gbps != null
else := "likely"

# summary is the slow group's one-line description, also quoted by
# exposed-communication.
summary := sprintf("%s on %s: %d calls of %s on average run at %s GB/s bus bandwidth%s, %s of %s's %s peak of %s GB/s per direction", [
	r.kind, group(r), r.sized_count, mb(r.bytes / r.sized_count), lib.fixed(bw(r), 1), ranks_note(r),
	lib.pct((bw(r) * 1e9) / link), input.device_peak.name, input.device_peak.link, lib.fixed(link / 1e9, 0),
]) if {
	r := input.collective_stats[worst[1]]
}

more_note := "; 1 more group is as slow" if count(slow) == 2
else := sprintf("; %d more groups are as slow", [count(slow) - 1]) if count(slow) > 2
else := ""

finding contains f if {
	count(slow) > 0
	r := input.collective_stats[worst[1]]
	f := {
		"msg": sprintf("%s; its exposed communication is %s (%s %s)%s", [summary, lib.dur(r.exposed_us), lib.pct(r.exposed_us / input.window_us), lib.of_time, more_note]),
		"impact": worst[0],
		"confidence": confidence(r),
		"severity": lib.severity(worst[0], "high"),
		"evidence": [
			{"name": "bus_bandwidth", "value": bw(r) * 1e9, "unit": "bytes_per_s"},
			{"name": "link_peak", "value": link, "unit": "bytes_per_s"},
			{"name": "exposed_us", "value": r.exposed_us, "unit": "us"},
			{"name": "bytes", "value": r.bytes, "unit": "bytes"},
		],
	}
}
