import torch
from loop import train_epoch

device = torch.device("cpu")
train_epoch(model, device, loader, optimizer)
