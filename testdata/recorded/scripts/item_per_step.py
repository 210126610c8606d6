"""Mistake (on a GPU): print(loss.item()) every step.

On CPU, .item() is not a device sync: it copies one float out of a tensor
already in host memory (aten::item -> aten::_local_scalar_dense, a few us).
Expected diagnosis: nothing about host syncs at medium or above; the report
should not claim the step waits on the device.
"""
import torch
import torch.nn as nn

from common import STEPS, Vectors, mlp, profiler

loader = torch.utils.data.DataLoader(Vectors(), batch_size=256, shuffle=True)
model = mlp()
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
loss_fn = nn.CrossEntropyLoss()

with profiler("item_per_step", with_stack=True) as prof:
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")
        prof.step()
