"""Fine-tune a sequence classifier with the Hugging Face Trainer, with a
class-weighted loss for an imbalanced label set."""
import argparse

import numpy as np
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)


class WeightedLossTrainer(Trainer):
    def __init__(self, *args, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.get("logits")
        weight = torch.tensor(self.class_weights, dtype=torch.float).to(logits.device)
        loss_fct = torch.nn.CrossEntropyLoss(weight=weight)
        loss = loss_fct(logits.view(-1, self.model.config.num_labels), labels.view(-1))
        return (loss, outputs) if return_outputs else loss


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = np.argmax(logits, axis=-1)
    return {"accuracy": float((preds == labels).mean())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="roberta-base")
    parser.add_argument("--output_dir", default="out/roberta-imbalanced")
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=2e-5)
    args = parser.parse_args()

    raw = load_dataset("tweet_eval", "hate")
    tokenizer = AutoTokenizer.from_pretrained(args.model)

    def tokenize(batch):
        return tokenizer(batch["text"], truncation=True, max_length=128)

    tokenized = raw.map(tokenize, batched=True, remove_columns=["text"])
    tokenized = tokenized.rename_column("label", "labels")

    counts = np.bincount(tokenized["train"]["labels"])
    class_weights = (counts.sum() / (len(counts) * counts)).tolist()

    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=len(counts))

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        weight_decay=0.01,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        bf16=True,
        dataloader_num_workers=4,
        logging_steps=50,
        report_to="none",
    )

    trainer = WeightedLossTrainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        class_weights=class_weights,
    )
    trainer.train()
    metrics = trainer.evaluate(tokenized["test"])
    print(metrics)
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
