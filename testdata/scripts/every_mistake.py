"""Every performance mistake stepdoctor lint knows, in one training script.

ResNet-style classifier on CIFAR-10; each mistake is marked with the rule
that must report it, in a want comment.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader as DL
from torch.profiler import profile, ProfilerActivity

device = torch.device("cuda")
torch.backends.cudnn.benchmark = False  # want: cudnn-benchmark-off

transform = T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.5,))])
train_set = torchvision.datasets.CIFAR10("./data", train=True, download=True, transform=transform)
train_loader = DL(train_set, batch_size=128, shuffle=True)  # want: dataloader-num-workers dataloader-pin-memory
test_set = torchvision.datasets.CIFAR10("./data", train=False, download=True, transform=transform)
test_loader = DL(test_set, batch_size=512, num_workers=4, pin_memory=True)

model = torchvision.models.resnet18(num_classes=10)
model = nn.DataParallel(model).cuda()  # want: data-parallel
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)  # want: optimizer-not-fused

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:  # want: profiler-no-schedule profiler-no-export profiler-overhead
    for epoch in range(10):
        running_loss = 0.0
        for i, (images, labels) in enumerate(train_loader):  # want: no-autocast
            images = images.to(device)  # want: blocking-copy
            labels = labels.cuda()  # want: blocking-copy
            weights = torch.ones(10).to(device)  # want: cpu-tensor-then-copy
            optimizer.zero_grad(set_to_none=False)  # want: zero-grad-set-to-none
            outputs = model(images)
            loss = F.cross_entropy(outputs, labels, weight=weights)
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()  # want: host-sync-in-loop
            running_loss += loss.item()  # want: host-sync-in-loop
            preds = outputs.argmax(dim=1).cpu().numpy()  # want: host-sync-in-loop
            print("loss", loss)  # want: host-sync-in-loop
            feats = None
            for k in range(outputs.shape[0]):
                row = outputs[k : k + 1]
                feats = row if feats is None else torch.cat([feats, row])  # want: cat-in-loop
        print(f"epoch {epoch}: {running_loss / len(train_loader):.3f}")

model.eval()
correct = torch.zeros((), device=device)
for images, labels in test_loader:  # want: autograd-in-eval
    outputs = model(images.to(device, non_blocking=True))
    correct += (outputs.argmax(dim=1) == labels.to(device, non_blocking=True)).sum()
print(f"accuracy: {correct.item() / len(test_set):.3f}")
