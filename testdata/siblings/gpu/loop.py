import torch.nn.functional as F


def train_epoch(model, device, data_loader, optimizer):
    model.train()
    for data, target in data_loader:
        optimizer.zero_grad()
        output = model(data.to(device))  # want: blocking-copy
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
