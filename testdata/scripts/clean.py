"""A single-GPU training script with none of the mistakes stepdoctor lint knows."""
import argparse

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True

    transform = T.Compose([T.RandomCrop(32, padding=4), T.ToTensor()])
    train_set = torchvision.datasets.CIFAR10("./data", train=True, download=True, transform=transform)
    loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=args.workers,
                        pin_memory=True, persistent_workers=True, prefetch_factor=4)

    model = torchvision.models.resnet18(num_classes=10).to(device, memory_format=torch.channels_last)
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        running = torch.zeros((), device=device)
        for step, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            running += loss.detach()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {running.item() / 100:.4f}")
                running.zero_()


if __name__ == "__main__":
    main()
