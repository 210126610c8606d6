"""Shared pieces of the recorded CPU traces: a small MLP / CNN, a synthetic
dataset, and a profiler that writes one gzipped Chrome trace.

Every script records with schedule(wait=1, warmup=1, active=3) and calls
prof.step() once per iteration, so each trace holds ProfilerStep#2..#4.
"""
import gzip
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

torch.manual_seed(0)
np.random.seed(0)
torch.set_num_threads(1)  # the 2-core recording machine is shared: one intra-op thread keeps timings steady

OUT = os.environ.get("RECORDED_OUT", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def mlp(width=512, depth=4, classes=10):
    layers = []
    d = 256
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, classes))
    return nn.Sequential(*layers)


def cnn(classes=10):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, classes),
    )


class Vectors(torch.utils.data.Dataset):
    """n random 256-d feature vectors with labels; no I/O."""

    def __init__(self, n=4096, dim=256):
        self.x = torch.randn(n, dim)
        self.y = torch.randint(0, 10, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def profiler(name, record_shapes=True, with_stack=False, profile_memory=False):
    """A torch.profiler that exports its trace to OUT/<name>.pt.trace.json.gz."""

    def export(prof):
        raw = os.path.join(OUT, name + ".pt.trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(raw)
        print("wrote", raw + ".gz", os.path.getsize(raw + ".gz"), "bytes", file=sys.stderr)

    return profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=export,
        record_shapes=record_shapes,
        with_stack=with_stack,
        profile_memory=profile_memory,
    )


STEPS = 5  # wait 1 + warmup 1 + active 3
