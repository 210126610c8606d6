"""ViT-B/16 training that follows the PyTorch performance tuning guide:
pinned memory and non_blocking copies, persistent workers, channels_last,
bf16 autocast, fused AdamW, set_to_none, torch.compile, and losses kept on
the GPU between log steps."""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from torchvision.transforms import v2 as T


def build_loader(root, batch_size, workers):
    tf = T.Compose([
        T.RandomResizedCrop(224, antialias=True),
        T.RandomHorizontalFlip(),
        T.ToImage(),
        T.ToDtype(torch.float32, scale=True),
        T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    ds = torchvision.datasets.ImageFolder(root, transform=tf)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=True, num_workers=workers,
                      pin_memory=True, persistent_workers=True, prefetch_factor=4)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/datasets/imagenet/train")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=12)
    p.add_argument("--log-every", type=int, default=100)
    args = p.parse_args()

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    loader = build_loader(args.data, args.batch_size, args.workers)
    model = torchvision.models.vit_b_16(num_classes=1000).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.3, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=args.epochs * len(loader))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.11)
    compiled = torch.compile(model)

    for epoch in range(args.epochs):
        compiled.train()
        running = torch.zeros((), device=device)
        correct = torch.zeros((), device=device, dtype=torch.long)
        t0 = time.perf_counter()
        for step, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True, memory_format=torch.channels_last)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits = compiled(images)
                loss = criterion(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()

            running += loss.detach()
            correct += (logits.argmax(1) == labels).sum()
            if (step + 1) % args.log_every == 0:
                n = args.log_every * args.batch_size
                dt = time.perf_counter() - t0
                print(f"epoch {epoch} step {step + 1}: loss {running.item() / args.log_every:.4f} "
                      f"acc {correct.item() / n:.3f} {n / dt:.0f} img/s")
                running.zero_()
                correct.zero_()
                t0 = time.perf_counter()
        torch.save(model.state_dict(), f"vit_b16_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
