"""A minimal batched generation worker: pulls prompts from a Redis list,
runs model.generate in fp16, pushes the completions back."""
import json
import os
import time

import redis
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL = os.environ.get("MODEL", "mistralai/Mistral-7B-Instruct-v0.3")
MAX_BATCH = int(os.environ.get("MAX_BATCH", "16"))

r = redis.Redis(host=os.environ.get("REDIS_HOST", "localhost"))
tokenizer = AutoTokenizer.from_pretrained(MODEL, padding_side="left")
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float16).cuda().eval()


def next_batch():
    items = []
    while len(items) < MAX_BATCH:
        raw = r.lpop("prompts")
        if raw is None:
            break
        items.append(json.loads(raw))
    return items


@torch.inference_mode()
def greedy_stream(prompt, max_new_tokens=256):
    """Token-by-token decoding for the streaming endpoint."""
    ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
    past = None
    out = []
    for _ in range(max_new_tokens):
        logits = model(input_ids=ids if past is None else ids[:, -1:], past_key_values=past, use_cache=True)
        past = logits.past_key_values
        next_id = logits.logits[:, -1].argmax(dim=-1, keepdim=True)
        if next_id.item() == tokenizer.eos_token_id:
            break
        out.append(next_id)
        ids = torch.cat([ids, next_id], dim=-1)
        r.publish("stream", tokenizer.decode(next_id[0]))
    return tokenizer.decode(torch.cat(out, dim=-1)[0]) if out else ""


def serve():
    while True:
        batch = next_batch()
        if not batch:
            time.sleep(0.01)
            continue
        if len(batch) == 1 and batch[0].get("stream"):
            r.rpush(f"done:{batch[0]['id']}", greedy_stream(batch[0]["prompt"]))
            continue
        prompts = [b["prompt"] for b in batch]
        inputs = tokenizer(prompts, return_tensors="pt", padding=True).to("cuda")
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=256, do_sample=False, pad_token_id=tokenizer.eos_token_id)
        texts = tokenizer.batch_decode(out[:, inputs.input_ids.shape[1]:], skip_special_tokens=True)
        for b, t in zip(batch, texts):
            r.rpush(f"done:{b['id']}", t)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    serve()
