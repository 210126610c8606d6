"""An evaluation-only script: with no training step, its evaluation loop is
the workload, so its host syncs are reported (low, "every evaluation
batch")."""
import torch
import torch.nn.functional as F
from tqdm import tqdm


@torch.no_grad()
def evaluate(model, loader):
    total, correct, worst = 0.0, 0, 0.0
    for i, (x, y) in enumerate(tqdm(loader)):
        x = x.to("cuda", non_blocking=True)
        y = y.to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        total += float(loss)  # want: host-sync-in-loop
        correct += int((out.argmax(1) == y).sum())  # want: host-sync-in-loop
        wrong = (out.argmax(1) != y).nonzero()  # want: host-sync-in-loop
        torch.cuda.empty_cache()  # want: host-sync-in-loop
        if loss > worst:  # want: host-sync-in-loop
            worst = loss
        if i > 0 and i % 100 == 0:
            print(i, total / i)
        if x is None or len(y) == 0:
            continue
        batches = int(i) + 1
    return total / batches, correct, worst


if __name__ == "__main__":
    model = torch.load("model.pt").cuda().eval()
    loader = torch.utils.data.DataLoader(torch.load("val.pt"), batch_size=256, pin_memory=True)  # want: dataloader-num-workers
    print(evaluate(model, loader))
