"""Mistake: inference without torch.no_grad() / torch.inference_mode().

Autograd records the graph and keeps activations for a backward that never
comes (AddmmBackward0 etc. nodes are created, memory for saved tensors).
Expected diagnosis: an inference trace (no backward, no optimizer) that says
to wrap the forward in torch.inference_mode(); at least it should not give
training advice.
"""
import torch

from common import STEPS, cnn, profiler

model = cnn().eval()
batches = [torch.randn(128, 3, 32, 32) for _ in range(STEPS)]

with profiler("inference_grad", profile_memory=True) as prof:
    for step in range(STEPS):
        logits = model(batches[step])
        pred = logits.softmax(1).argmax(1)
        prof.step()
