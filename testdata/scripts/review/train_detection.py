"""Fine-tune Faster R-CNN on a COCO-format dataset."""
import argparse
import os

import torch
import torchvision
from torchvision.datasets import CocoDetection
from torchvision.models.detection import fasterrcnn_resnet50_fpn_v2
from torchvision.transforms import v2 as T

import detection_utils as utils
from detection_engine import evaluate, train_one_epoch


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-path", default="/datasets/coco")
    p.add_argument("--epochs", type=int, default=26)
    p.add_argument("-b", "--batch-size", type=int, default=4)
    p.add_argument("-j", "--workers", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--print-freq", type=int, default=20)
    p.add_argument("--output-dir", default="out")
    return p.parse_args()


def get_dataset(root, split, train):
    tf = T.Compose([T.ToImage(), T.RandomHorizontalFlip(0.5) if train else T.Identity(), T.ToDtype(torch.float, scale=True)])
    ds = CocoDetection(os.path.join(root, f"{split}2017"), os.path.join(root, "annotations", f"instances_{split}2017.json"),
                       transforms=tf)
    return torchvision.datasets.wrap_dataset_for_transforms_v2(ds, target_keys=("boxes", "labels", "image_id"))


def main():
    args = get_args()
    device = torch.device("cuda")
    dataset = get_dataset(args.data_path, "train", train=True)
    dataset_test = get_dataset(args.data_path, "val", train=False)
    data_loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                              num_workers=args.workers, collate_fn=utils.collate_fn)
    data_loader_test = torch.utils.data.DataLoader(dataset_test, batch_size=1, num_workers=args.workers,
                                                   collate_fn=utils.collate_fn)

    model = fasterrcnn_resnet50_fpn_v2(weights="DEFAULT")
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[16, 22], gamma=0.1)
    scaler = torch.amp.GradScaler("cuda") if args.amp else None

    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer, data_loader, device, epoch, args.print_freq, scaler)
        lr_scheduler.step()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                   os.path.join(args.output_dir, f"model_{epoch}.pth"))
        evaluate(model, data_loader_test, device=device)


if __name__ == "__main__":
    main()
