"""Single-GPU ImageNet-style classification: mostly right, a few slips."""
import time

import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

device = "cuda"
torch.backends.cudnn.benchmark = True

train_tf = transforms.Compose([
    transforms.RandomResizedCrop(224),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
])
train_ds = datasets.ImageFolder("/data/imagenet/train", transform=train_tf)
val_ds = datasets.ImageFolder("/data/imagenet/val", transform=transforms.ToTensor())
train_loader = DataLoader(train_ds, batch_size=256, shuffle=True, num_workers=16,  # want: dataloader-persistent-workers
                          pin_memory=True)
val_loader = DataLoader(val_ds, batch_size=256, num_workers=16, pin_memory=True)  # want: dataloader-persistent-workers

model = models.resnet50().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)  # want: optimizer-not-fused
scaler = torch.amp.GradScaler("cuda")

for epoch in range(90):
    model.train()
    start = time.perf_counter()
    for i, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(images), target)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        # stepdoctor: ignore[host-sync-in-loop] the benchmark times each step on purpose
        torch.cuda.synchronize()
        if i % 50 == 0:
            print(f"step {i}: {(time.perf_counter() - start) / (i + 1):.3f} s/step, loss {loss.item():.3f}")

    model.eval()
    all_preds = torch.empty(0, dtype=torch.long, device=device)
    with torch.no_grad():
        for images, target in val_loader:
            images = images.to(device, non_blocking=True)
            preds = model(images).argmax(1)
            all_preds = torch.cat([all_preds, preds])  # want: cat-in-loop
    print("val predictions", all_preds.shape)
