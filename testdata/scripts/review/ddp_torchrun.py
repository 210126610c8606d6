"""Multi-GPU training launched with
    torchrun --nproc_per_node=8 ddp_torchrun.py --epochs 90
One process per GPU, DistributedSampler, checkpoint on rank 0."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank, dist.get_rank(), dist.get_world_size()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/datasets/imagenet")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--ckpt", default="ckpt.pt")
    args = parser.parse_args()

    local_rank, rank, world_size = setup()
    torch.backends.cudnn.benchmark = True

    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    train_set = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), tf)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(train_set, batch_size=args.batch_size // world_size, sampler=sampler,
                        num_workers=8, pin_memory=True, drop_last=True)

    model = torchvision.models.resnet50().to(local_rank)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss().to(local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * world_size, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.amp.GradScaler("cuda")

    start_epoch = 0
    if os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location=f"cuda:{local_rank}")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1

    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for i, (images, targets) in enumerate(loader):
            images = images.to(local_rank)
            targets = targets.to(local_rank)
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(images)
                loss = criterion(output, targets)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            reduced = loss.detach().clone()
            dist.all_reduce(reduced, op=dist.ReduceOp.AVG)
            if rank == 0:
                print(f"epoch {epoch} iter {i}/{len(loader)} loss {reduced.item():.4f}")
        scheduler.step()

        if rank == 0:
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                       args.ckpt)
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
