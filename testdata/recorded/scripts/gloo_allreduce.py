"""Two CPU ranks (gloo, MASTER_ADDR=127.0.0.1) training with
DistributedDataParallel; one trace per rank. Mistake: bucket_cap_mb tiny
(so one all-reduce per parameter) and a small model, so communication on
the host is a large share of the step.
Expected diagnosis: cpu-collectives (or unbucketed-allreduce) first.
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

import common
from common import STEPS, mlp, profiler


def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "29517")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(mlp(width=512, depth=6), bucket_cap_mb=0.01)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    with profiler(f"gloo_allreduce/rank{rank}") as prof:
        for step in range(STEPS):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.makedirs(os.path.join(common.OUT, "gloo_allreduce"), exist_ok=True)
    mp.spawn(worker, args=(2,), nprocs=2, join=True)
