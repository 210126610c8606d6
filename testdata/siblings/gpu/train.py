import torch
from torch.utils.data import DataLoader
from datautils import InMemoryDataset, DiskDataset, TinyNet, ConvNet


def load_train_objs():
    train_set = InMemoryDataset(2048)
    model = TinyNet().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True)


dataset, model, optimizer = load_train_objs()
train_data = prepare_dataloader(dataset, 32)
disk_loader = DataLoader(DiskDataset(["a.pt", "b.pt"]), batch_size=8, pin_memory=True)  # want: dataloader-num-workers
conv = ConvNet().cuda()
conv_opt = torch.optim.SGD(conv.parameters(), lr=1e-3)  # want: optimizer-not-fused
