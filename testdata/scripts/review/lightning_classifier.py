"""Image classifier with PyTorch Lightning: LightningModule + DataModule,
trained on 2 GPUs with DDP and 16-bit mixed precision."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from torch.utils.data import DataLoader, random_split
from torchvision import transforms


class FlowersDataModule(L.LightningDataModule):
    def __init__(self, data_dir="data/flowers102", batch_size=64):
        super().__init__()
        self.data_dir = data_dir
        self.batch_size = batch_size
        self.train_tf = transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        ])
        self.eval_tf = transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        ])

    def prepare_data(self):
        torchvision.datasets.Flowers102(self.data_dir, split="train", download=True)
        torchvision.datasets.Flowers102(self.data_dir, split="val", download=True)

    def setup(self, stage=None):
        full = torchvision.datasets.Flowers102(self.data_dir, split="train", transform=self.train_tf)
        self.train_set, self.holdout = random_split(full, [0.9, 0.1])
        self.val_set = torchvision.datasets.Flowers102(self.data_dir, split="val", transform=self.eval_tf)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size, num_workers=4)


class LitResNet(L.LightningModule):
    def __init__(self, num_classes=102, lr=0.05, max_epochs=30):
        super().__init__()
        self.save_hyperparameters()
        self.model = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        self.model.fc = nn.Linear(self.model.fc.in_features, num_classes)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", acc.item(), prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log_dict({"val_loss": loss, "val_acc": acc}, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


if __name__ == "__main__":
    L.seed_everything(42)
    dm = FlowersDataModule()
    model = LitResNet()
    trainer = L.Trainer(
        accelerator="gpu",
        devices=2,
        strategy="ddp",
        precision="16-mixed",
        max_epochs=30,
        callbacks=[ModelCheckpoint(monitor="val_acc", mode="max"), LearningRateMonitor("step")],
        log_every_n_steps=20,
    )
    trainer.fit(model, datamodule=dm)
