"""DistributedDataParallel training, launched with torchrun --nproc_per_node=8."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader as Loader
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    dataset = torch.load("/data/tokens.pt")
    sampler = DistributedSampler(dataset)
    loader = Loader(dataset, batch_size=32, sampler=sampler, num_workers=0, pin_memory=True)  # want: dataloader-num-workers

    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, batch_first=True), 6).to(device)
    model = DDP(model, device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    for epoch in range(5):
        sampler.set_epoch(epoch)
        for step, batch in enumerate(loader):
            batch = batch.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = model(batch).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            loss_value = loss.detach()
            dist.all_reduce(loss_value)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} step {step} loss {loss_value.item() / dist.get_world_size():.4f}")  # want: host-sync-in-loop
            lengths = torch.tensor([batch.shape[1]]).cuda()  # want: cpu-tensor-then-copy
            dist.all_reduce(lengths)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
