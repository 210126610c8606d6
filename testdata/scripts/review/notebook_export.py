#!/usr/bin/env python
# coding: utf-8

# # Fashion-MNIST classifier
# Exported from `fashion_mnist.ipynb` with `jupyter nbconvert --to script`.

# In[1]:


get_ipython().system('pip install -q torchvision matplotlib')


# In[2]:


import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets
from torchvision.transforms import ToTensor

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")


# In[3]:


training_data = datasets.FashionMNIST(root="data", train=True, download=True, transform=ToTensor())
test_data = datasets.FashionMNIST(root="data", train=False, download=True, transform=ToTensor())
train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=64)


# In[4]:


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


model = ConvNet().to(device)
model


# In[5]:


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_losses = []
test_acc = []


# In[6]:


for epoch in range(10):
    model.train()
    for batch, (X, y) in enumerate(train_dataloader):
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        train_losses.append(loss)
        if batch % 100 == 0:
            print(f"epoch {epoch} [{batch * len(X):>5d}/{len(train_dataloader.dataset)}] loss: {loss.item():>7f}")

    model.eval()
    correct = 0
    with torch.no_grad():
        for X, y in test_dataloader:
            X, y = X.to(device), y.to(device)
            correct += (model(X).argmax(1) == y).type(torch.float).sum().item()
    test_acc.append(correct / len(test_dataloader.dataset))
    print(f"epoch {epoch}: test accuracy {100 * test_acc[-1]:.1f}%")


# In[7]:


plt.plot([l.item() for l in train_losses])
plt.xlabel("step")
plt.ylabel("loss")
plt.show()


# In[8]:


torch.save(model.state_dict(), "fashion_convnet.pth")
