"""Causal LM fine-tuning with a hand-written accelerate loop."""
import argparse
import math
import os

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator, get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="EleutherAI/pythia-410m")
    p.add_argument("--dataset", default="wikitext")
    p.add_argument("--dataset_config", default="wikitext-103-raw-v1")
    p.add_argument("--block_size", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--output_dir", default="checkpoints")
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=args.grad_accum, log_with="wandb")
    set_seed(1234)
    accelerator.init_trackers("lm-finetune", config=vars(args))

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    raw = load_dataset(args.dataset, args.dataset_config)

    def tokenize(examples):
        return tokenizer(examples["text"])

    def group_texts(examples):
        concatenated = {k: sum(examples[k], []) for k in examples.keys()}
        total = (len(concatenated["input_ids"]) // args.block_size) * args.block_size
        result = {
            k: [t[i : i + args.block_size] for i in range(0, total, args.block_size)]
            for k, t in concatenated.items()
        }
        result["labels"] = result["input_ids"].copy()
        return result

    with accelerator.main_process_first():
        tokenized = raw.map(tokenize, batched=True, num_proc=8, remove_columns=["text"])
        lm_datasets = tokenized.map(group_texts, batched=True, num_proc=8)

    train_dataloader = DataLoader(
        lm_datasets["train"], shuffle=True, collate_fn=default_data_collator, batch_size=args.batch_size
    )
    eval_dataloader = DataLoader(lm_datasets["validation"], collate_fn=default_data_collator, batch_size=args.batch_size)

    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    model.gradient_checkpointing_enable()

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.lr, betas=(0.9, 0.95))

    steps_per_epoch = math.ceil(len(train_dataloader) / args.grad_accum)
    max_steps = args.epochs * steps_per_epoch
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=100, num_training_steps=max_steps)

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    progress = tqdm(range(max_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            avg_loss = accelerator.gather(loss.detach()).mean().item()
            accelerator.log({"train_loss": avg_loss, "lr": lr_scheduler.get_last_lr()[0]}, step=completed_steps)
            if accelerator.sync_gradients:
                progress.update(1)
                completed_steps += 1

        model.eval()
        losses = []
        for batch in eval_dataloader:
            with torch.no_grad():
                outputs = model(**batch)
            losses.append(accelerator.gather_for_metrics(outputs.loss.repeat(args.batch_size)))
        losses = torch.cat(losses)
        try:
            perplexity = math.exp(torch.mean(losses))
        except OverflowError:
            perplexity = float("inf")
        accelerator.print(f"epoch {epoch}: perplexity {perplexity:.2f}")
        accelerator.log({"perplexity": perplexity}, step=completed_steps)

        accelerator.wait_for_everyone()
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(
            os.path.join(args.output_dir, f"epoch_{epoch}"),
            is_main_process=accelerator.is_main_process,
            save_function=accelerator.save,
        )

    accelerator.end_training()


if __name__ == "__main__":
    main()
