"""Healthy CPU training loop: batch 256, the data already in memory
(DataLoader over tensors), foreach Adam, zero_grad(set_to_none=True), no
.item() in the loop. The matmuls (aten::addmm / aten::mm) should take most
of the step.
Expected diagnosis: no finding at medium or above.
"""
import torch
import torch.nn as nn

from common import STEPS, Vectors, mlp, profiler

loader = torch.utils.data.DataLoader(Vectors(n=8192), batch_size=512, shuffle=True)
model = mlp(width=1024)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
loss_fn = nn.CrossEntropyLoss()

with profiler("healthy", with_stack=True, profile_memory=True) as prof:
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
