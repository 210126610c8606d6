"""Logging helpers for the detection recipe."""
import datetime
import time
from collections import defaultdict, deque

import torch


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n

    @property
    def avg(self):
        return sum(self.deque) / max(len(self.deque), 1)

    def __str__(self):
        return f"{self.avg:.4f}"


class MetricLogger:
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.meters[k].update(v)

    def log_every(self, iterable, print_freq, header=""):
        start = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                meters = self.delimiter.join(f"{k}: {v}" for k, v in self.meters.items())
                print(f"{header} [{i}/{len(iterable)}] {meters}")
        total = time.time() - start
        print(f"{header} Total time: {datetime.timedelta(seconds=int(total))}")


def collate_fn(batch):
    return tuple(zip(*batch))
