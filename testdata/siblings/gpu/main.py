import torch
from loop import train_epoch

device = torch.device("cuda")
train_epoch(model, device, loader, optimizer)
