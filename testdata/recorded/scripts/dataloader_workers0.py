"""Mistake: DataLoader(num_workers=0) with an expensive __getitem__.

Each sample runs a numpy augmentation (random crop, flip, 3x3 blur, colour
jitter, normalise) in the training process, so the step waits for the
batch: the DataLoader's __next__ should take most of each ProfilerStep.
Expected diagnosis: dataloader-bound (raise num_workers).
"""
import numpy as np
import torch
import torch.nn as nn

from common import STEPS, cnn, profiler


class AugmentedImages(torch.utils.data.Dataset):
    def __init__(self, n=512):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, size=(n, 40, 40, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, size=n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = self.images[i].astype(np.float32) / 255.0
        y0, x0 = rng.integers(0, 8, size=2)
        img = img[y0:y0 + 32, x0:x0 + 32]
        if rng.random() < 0.5:
            img = img[:, ::-1]
        # 3x3 box blur, done the slow way: nine shifted copies
        pad = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="reflect")
        acc = np.zeros_like(img)
        for dy in range(3):
            for dx in range(3):
                acc += pad[dy:dy + 32, dx:dx + 32]
        img = acc / 9.0
        for _ in range(60):  # colour jitter, repeated to cost what a real pipeline costs
            img = np.clip(img * rng.uniform(0.9, 1.1, size=3) + rng.uniform(-0.05, 0.05), 0, 1)
        img = ((img - 0.5) / 0.25).astype(np.float32)
        return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))), int(self.labels[i])


loader = torch.utils.data.DataLoader(AugmentedImages(), batch_size=64, shuffle=True, num_workers=0)
model = cnn()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

with profiler("dataloader_workers0", with_stack=True) as prof:
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
