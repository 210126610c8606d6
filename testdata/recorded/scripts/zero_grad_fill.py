"""Mistake: opt.zero_grad(set_to_none=False) every step, over a model with
many parameters: aten::zero_ on every gradient instead of dropping them.
Expected diagnosis: optimizer-zero-grad (set_to_none=True, the default
since torch 2.0).
"""
import torch
import torch.nn as nn

from common import STEPS, profiler

blocks = []
for _ in range(40):
    blocks += [nn.Linear(64, 64), nn.ReLU()]
model = nn.Sequential(nn.Linear(256, 64), *blocks, nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
loss_fn = nn.CrossEntropyLoss()
x = torch.randn(64, 256)
y = torch.randint(0, 10, (64,))

with profiler("zero_grad_fill", with_stack=True) as prof:
    for step in range(STEPS):
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
