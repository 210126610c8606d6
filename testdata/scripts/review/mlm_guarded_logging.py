"""Masked-LM pretraining of a small BERT with a custom loop. Host reads of
the loss are deliberate and rare: every `log_every` steps, under a guard."""
import argparse
import math

import torch
import wandb
from datasets import load_from_disk
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast, DataCollatorForLanguageModeling


def train_step(model, batch, optimizer, scheduler, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach(), grad_norm


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/bookcorpus_tok512")
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=5000)
    args = p.parse_args()

    device = torch.device("cuda")
    tokenizer = BertTokenizerFast.from_pretrained("bert-base-uncased")
    ds = load_from_disk(args.data).with_format("torch")
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    loader = DataLoader(ds["train"], batch_size=args.batch_size, shuffle=True, collate_fn=collator,
                        num_workers=4, pin_memory=True, drop_last=True)
    val_loader = DataLoader(ds["validation"], batch_size=args.batch_size, collate_fn=collator, num_workers=2,
                            pin_memory=True)

    model = BertForMaskedLM(BertConfig(hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                                       intermediate_size=2048)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01, fused=True)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10_000))
    scaler = torch.amp.GradScaler("cuda")
    wandb.init(project="bert-small-mlm", config=vars(args))

    step = 0
    model.train()
    while step < args.steps:
        for batch in loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            loss, grad_norm = train_step(model, batch, optimizer, scheduler, scaler)
            step += 1

            if step % args.log_every == 0:
                wandb.log({"train/loss": loss.item(), "train/grad_norm": grad_norm.item(),
                           "lr": scheduler.get_last_lr()[0]}, step=step)

            if step % args.eval_every == 0:
                model.eval()
                total = torch.zeros((), device=device)
                with torch.no_grad():
                    for vb in val_loader:
                        vb = {k: v.to(device, non_blocking=True) for k, v in vb.items()}
                        with torch.autocast("cuda", dtype=torch.float16):
                            total += model(**vb).loss
                val_loss = (total / len(val_loader)).item()
                wandb.log({"val/loss": val_loss, "val/ppl": math.exp(val_loss)}, step=step)
                model.train()

            if step >= args.steps:
                break

    model.save_pretrained("bert-small-mlm")


if __name__ == "__main__":
    main()
