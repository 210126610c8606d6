# METADATA
# title: nn.DataParallel instead of DistributedDataParallel
# description: |
#   **Why it matters.** `nn.DataParallel` runs one Python process for all
#   GPUs: every step it scatters the batch from GPU 0, replicates the model,
#   gathers the outputs back on GPU 0, and all of it is serialised by the GIL.
#   GPU 0 becomes the bottleneck and scaling stalls after a few GPUs. PyTorch
#   recommends `DistributedDataParallel` (one process per GPU, gradients
#   all-reduced in buckets overlapped with backward) even on one machine.
#
#   **Fix.**
#
#   ```python
#   # torchrun --nproc_per_node=8 train.py
#   dist.init_process_group("nccl")
#   local_rank = int(os.environ["LOCAL_RANK"])
#   torch.cuda.set_device(local_rank)
#   model = DDP(model.to(local_rank), device_ids=[local_rank])
#   sampler = DistributedSampler(dataset)
#   loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4, pin_memory=True)
#   ```
#
#   **How to confirm.** What stepdoctor matches: A call to `torch.nn.DataParallel`.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 10% of step time (`impact`), with confidence "likely".
# custom:
#   id: data-parallel
#   severity: medium
#   category: script
#   requires: [features]
#   confidence: likely
#   params:
#     impact: 0.1
#   references:
#     - https://pytorch.org/docs/stable/notes/cuda.html#use-nn-parallel-distributeddataparallel-instead-of-multiprocessing-or-nn-dataparallel
#     - https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html
#     - https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
package stepdoctor.rules.data_parallel

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["data-parallel"]

finding contains f if {
	some u in input.features.data_parallel
	f := {
		"msg": "nn.DataParallel serialises scatter, replication and gather through GPU 0 and one Python process; use DistributedDataParallel",
		"impact": params.impact,
		"location": slib.loc(u),
	}
}
