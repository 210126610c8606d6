"""FSDP fine-tuning of a decoder LM (torchrun), bf16 via FSDP MixedPrecision,
transformer-block auto wrapping, activation checkpointing."""
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer


class PackedTokens(Dataset):
    """Fixed-length blocks read from a pre-tokenized .pt shard list."""

    def __init__(self, shard_paths, seq_len):
        self.shards = shard_paths
        self.seq_len = seq_len
        self.index = []
        for s, path in enumerate(shard_paths):
            n = torch.load(path, mmap=True).numel() // (seq_len + 1)
            self.index.extend((s, i) for i in range(n))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        s, j = self.index[i]
        tokens = torch.load(self.shards[s], mmap=True)
        block = tokens[j * (self.seq_len + 1) : (j + 1) * (self.seq_len + 1)].long()
        return block[:-1], block[1:]


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = dist.get_world_size()
    torch.cuda.set_device(local_rank)

    shards = sorted(os.path.join("data/shards", f) for f in os.listdir("data/shards"))
    dataset = PackedTokens(shards, seq_len=4096)
    sampler = DistributedSampler(dataset, rank=rank, num_replicas=world_size, shuffle=True)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2, pin_memory=True)

    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", torch_dtype=torch.float32)
    wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer})
    bf16 = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    model = FSDP(
        model,
        auto_wrap_policy=wrap_policy,
        mixed_precision=bf16,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=torch.cuda.current_device(),
        use_orig_params=True,
    )
    apply_activation_checkpointing(
        model, check_fn=lambda m: isinstance(m, LlamaDecoderLayer)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.0)

    for epoch in range(2):
        sampler.set_epoch(epoch)
        model.train()
        ddp_loss = torch.zeros(2).to(local_rank)
        for step, (input_ids, labels) in enumerate(loader):
            input_ids = input_ids.to(local_rank, non_blocking=True)
            labels = labels.to(local_rank, non_blocking=True)
            out = model(input_ids=input_ids, labels=labels)
            out.loss.backward()
            model.clip_grad_norm_(1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            ddp_loss[0] += out.loss.item()
            ddp_loss[1] += len(input_ids)
        dist.all_reduce(ddp_loss, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch}: loss {ddp_loss[0] / ddp_loss[1]:.4f}")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
