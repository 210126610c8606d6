"""Mistake: a hand-written activation and loss built from many tiny
elementwise ops in a Python loop (a "polynomial GELU" applied term by term,
a per-feature scaling loop), so the step is dominated by hundreds of small
aten:: calls rather than the matmuls.
Expected diagnosis: repeated-small-op (or elementwise-fusion): fuse with
torch.compile / use the built-in op.
"""
import torch
import torch.nn as nn

from common import STEPS, Vectors, profiler


class SlowMLP(nn.Module):
    def __init__(self, dim=256, hidden=256):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, 10)
        self.coef = [0.5, 0.0447, 0.01, 0.003, 0.001]

    def act(self, h):
        # GELU-like polynomial, one term at a time
        out = torch.zeros_like(h)
        p = torch.ones_like(h)
        for c in self.coef:
            p = p * h
            out = out + c * p
        return out

    def forward(self, x):
        h = self.fc1(x)
        # per-chunk scaling in Python: 64 slices, each with a handful of ops
        chunks = []
        for c in h.split(4, dim=1):
            c = self.act(c)
            c = c * 0.9 + 0.1
            chunks.append(torch.tanh(c))
        return self.fc2(torch.cat(chunks, dim=1))


loader = torch.utils.data.DataLoader(Vectors(), batch_size=64, shuffle=True)
model = SlowMLP()
opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
loss_fn = nn.CrossEntropyLoss()

with profiler("unfused_elementwise") as prof:
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
