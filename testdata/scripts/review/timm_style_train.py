#!/usr/bin/env python3
"""ImageNet training in the style of timm's train.py: DDP via torchrun,
channels_last, native AMP, EMA and a cosine schedule."""
import argparse
import logging
import os
import time
from collections import OrderedDict

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.datasets as datasets
import torchvision.transforms as transforms
from timm.data import Mixup
from timm.loss import SoftTargetCrossEntropy
from timm.models import create_model
from timm.scheduler import create_scheduler
from timm.utils import AverageMeter, ModelEmaV2, accuracy, reduce_tensor
from torch.nn.parallel import DistributedDataParallel as NativeDDP

_logger = logging.getLogger("train")

parser = argparse.ArgumentParser(description="ImageNet training")
parser.add_argument("data_dir", metavar="DIR")
parser.add_argument("--model", default="resnet50")
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("-j", "--workers", type=int, default=8)
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--lr", type=float, default=0.5)
parser.add_argument("--weight-decay", type=float, default=2e-5)
parser.add_argument("--sched", default="cosine")
parser.add_argument("--warmup-epochs", type=int, default=5)
parser.add_argument("--mixup", type=float, default=0.2)
parser.add_argument("--channels-last", action="store_true", default=False)
parser.add_argument("--amp", action="store_true", default=False)
parser.add_argument("--model-ema", action="store_true", default=False)
parser.add_argument("--log-interval", type=int, default=50)
parser.add_argument("--output", default="./output")


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None, amp_autocast=None,
                    loss_scaler=None, model_ema=None, mixup_fn=None):
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    losses_m = AverageMeter()

    model.train()
    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
        if mixup_fn is not None:
            input, target = mixup_fn(input, target)
        if args.channels_last:
            input = input.contiguous(memory_format=torch.channels_last)

        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)

        if not args.distributed:
            losses_m.update(loss.item(), input.size(0))

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler.scale(loss).backward()
            loss_scaler.step(optimizer)
            loss_scaler.update()
        else:
            loss.backward()
            optimizer.step()

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)
            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), input.size(0))
            if args.rank == 0:
                _logger.info(
                    f"Train: {epoch} [{batch_idx:>4d}/{len(loader)}] Loss: {losses_m.val:#.4g} ({losses_m.avg:#.3g}) "
                    f"Time: {batch_time_m.val:.3f}s LR: {lr:.3e} Data: {data_time_m.val:.3f}"
                )
        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)
        end = time.time()

    return OrderedDict([("loss", losses_m.avg)])


def validate(model, loader, loss_fn, args, amp_autocast=None):
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    top5_m = AverageMeter()
    model.eval()
    with torch.no_grad():
        for input, target in loader:
            input = input.cuda()
            target = target.cuda()
            if args.channels_last:
                input = input.contiguous(memory_format=torch.channels_last)
            with amp_autocast():
                output = model(input)
            loss = loss_fn(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            if args.distributed:
                loss = reduce_tensor(loss.data, args.world_size)
                acc1 = reduce_tensor(acc1, args.world_size)
                acc5 = reduce_tensor(acc5, args.world_size)
            torch.cuda.synchronize()
            losses_m.update(loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
            top5_m.update(acc5.item(), output.size(0))
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg), ("top5", top5_m.avg)])


def main():
    args = parser.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    args.rank, args.world_size, args.local_rank = 0, 1, 0
    if args.distributed:
        args.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = dist.get_world_size()
        args.rank = dist.get_rank()
    torch.backends.cudnn.benchmark = True

    model = create_model(args.model, pretrained=False, num_classes=1000, drop_path_rate=0.05)
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True,
                                weight_decay=args.weight_decay)
    amp_autocast = lambda: torch.autocast("cuda", dtype=torch.float16, enabled=args.amp)
    loss_scaler = torch.amp.GradScaler("cuda") if args.amp else None

    model_ema = ModelEmaV2(model, decay=0.9998) if args.model_ema else None
    if args.distributed:
        model = NativeDDP(model, device_ids=[args.local_rank])

    lr_scheduler, num_epochs = create_scheduler(args, optimizer)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    dataset_train = datasets.ImageFolder(os.path.join(args.data_dir, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    dataset_eval = datasets.ImageFolder(os.path.join(args.data_dir, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    sampler_train = torch.utils.data.distributed.DistributedSampler(dataset_train) if args.distributed else None
    sampler_eval = torch.utils.data.distributed.DistributedSampler(dataset_eval, shuffle=False) if args.distributed else None
    loader_train = torch.utils.data.DataLoader(
        dataset_train, batch_size=args.batch_size, shuffle=sampler_train is None, sampler=sampler_train,
        num_workers=args.workers, pin_memory=True, drop_last=True, persistent_workers=True)
    loader_eval = torch.utils.data.DataLoader(
        dataset_eval, batch_size=args.batch_size * 2, sampler=sampler_eval, num_workers=args.workers,
        pin_memory=True)

    mixup_fn = Mixup(mixup_alpha=args.mixup, num_classes=1000) if args.mixup > 0 else None
    train_loss_fn = SoftTargetCrossEntropy().cuda() if mixup_fn else nn.CrossEntropyLoss().cuda()
    validate_loss_fn = nn.CrossEntropyLoss().cuda()

    best_metric = None
    for epoch in range(num_epochs):
        if args.distributed:
            sampler_train.set_epoch(epoch)
        train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, args,
                                        lr_scheduler=lr_scheduler, amp_autocast=amp_autocast,
                                        loss_scaler=loss_scaler, model_ema=model_ema, mixup_fn=mixup_fn)
        eval_metrics = validate(model, loader_eval, validate_loss_fn, args, amp_autocast=amp_autocast)
        if model_ema is not None:
            validate(model_ema.module, loader_eval, validate_loss_fn, args, amp_autocast=amp_autocast)
        lr_scheduler.step(epoch + 1, eval_metrics["top1"])
        if args.rank == 0 and (best_metric is None or eval_metrics["top1"] > best_metric):
            best_metric = eval_metrics["top1"]
            torch.save(model.state_dict(), os.path.join(args.output, "model_best.pth"))
        _logger.info(f"epoch {epoch}: train {train_metrics['loss']:.4f} top1 {eval_metrics['top1']:.2f}")


if __name__ == "__main__":
    main()
