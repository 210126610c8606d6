"""A step-budgeted training loop (while step < max_steps) fed from an iterator over a
DataLoader, as in many LLM fine-tuning scripts, plus an evaluation loop with tqdm."""
import math
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm


def train(model, dataset, max_steps=10_000, log_every=50):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, pin_memory=True,
                        persistent_workers=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    scaler = torch.amp.GradScaler("cuda")
    data_iter = iter(loader)
    step = 0
    start = time.time()
    while step < max_steps:
        try:
            tokens, targets = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            tokens, targets = next(data_iter)
        tokens = tokens.cuda()  # want: blocking-copy
        targets = targets.to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        tokens_seen = int(tokens.numel())
        elapsed = float(time.time() - start)
        warmup = min(1.0, float(step) / 100)
        lr = 1e-4 * 0.5 * (1 + math.cos(math.pi * step / max_steps)) * warmup
        if step % log_every == 0:
            print(f"step {step} loss {loss.item():.4f} lr {lr:.2e} {tokens_seen / elapsed:.0f} tok/s")
        running = loss.item()  # want: host-sync-in-loop
        if step > 0 and step % 1000 == 0:
            torch.save(model.state_dict(), f"ckpt_{step}.pt")
        step += 1
    return running


@torch.no_grad()
def evaluate(model, loader):
    total, correct, worst = 0.0, 0, 0.0
    for i, (x, y) in enumerate(tqdm(loader)):
        x = x.to("cuda", non_blocking=True)
        y = y.to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        total += float(loss)  # the evaluation loop of a script that trains: not reported
        correct += int((out.argmax(1) == y).sum())
        wrong = (out.argmax(1) != y).nonzero()
        torch.cuda.empty_cache()
        if loss > worst:
            worst = loss
        if i > 0 and i % 100 == 0:
            print(i, total / i)
        if x is None or len(y) == 0:
            continue
        batches = int(i) + 1
    return total / batches, correct, worst
