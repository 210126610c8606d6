"""Mistake: Adam(foreach=False) over a model with many small parameters
(48 tiny Linear layers + LayerNorms, ~200 tensors): the optimizer runs
one set of aten:: ops per parameter.
Expected diagnosis: the optimizer step's per-parameter loop (foreach=True);
the optimizer should be the largest share of the step.
"""
import torch
import torch.nn as nn

from common import STEPS, profiler

torch.manual_seed(0)
blocks = []
for _ in range(48):
    blocks += [nn.Linear(32, 32), nn.LayerNorm(32), nn.ReLU()]
model = nn.Sequential(nn.Linear(256, 32), *blocks, nn.Linear(32, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
loss_fn = nn.CrossEntropyLoss()
x = torch.randn(32, 256)
y = torch.randint(0, 10, (32,))

with profiler("optimizer_no_foreach", profile_memory=True) as prof:
    for step in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
