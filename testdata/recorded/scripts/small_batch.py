"""Mistake: batch_size=2 on a 4-layer MLP: each step's fixed costs
(Python, dispatcher, DataLoader collate, optimizer over every parameter)
dwarf the matmuls.
Expected diagnosis: small-batch (raise the batch size).
"""
import torch
import torch.nn as nn

from common import STEPS, Vectors, mlp, profiler

loader = torch.utils.data.DataLoader(Vectors(), batch_size=2, shuffle=True)
model = mlp()
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
loss_fn = nn.CrossEntropyLoss()

with profiler("small_batch") as prof:
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
