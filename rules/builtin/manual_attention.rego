# METADATA
# title: Attention written out by hand instead of a fused kernel
# description: |
#   **Why it matters.** `softmax(q @ k.transpose(-2, -1) * scale) @ v` runs
#   as separate kernels (a batched GEMM, the scaling and mask, the softmax,
#   dropout, a second GEMM) and writes the whole T x T weight matrix of every
#   head to memory and reads it back, several times, in the forward and again
#   in the backward. `F.scaled_dot_product_attention` (PyTorch 2.0 and later)
#   picks a fused kernel instead: FlashAttention (fp16 / bf16 on Ampere and
#   newer NVIDIA GPUs, and on ROCm; causal or no mask), memory-efficient
#   attention (float32 too, older GPUs, arbitrary masks and biases), cuDNN
#   attention on recent NVIDIA GPUs, or the math path as a last resort. The
#   fused kernels never store the weights, so without a mask attention's
#   memory grows with T instead of T², and the time saved grows with the
#   sequence length. A mask or bias passed as `attn_mask` is itself read in
#   full, so the saving there is smaller.
#
#   **Fix.**
#
#   ```python
#   import torch.nn.functional as F
#   # replaces: att = (q @ k.transpose(-2, -1)) * scale; att.masked_fill(...);
#   #           F.softmax(att, dim=-1); dropout; att @ v
#   y = F.scaled_dot_product_attention(
#       q, k, v,              # (B, heads, T, head_dim)
#       attn_mask=mask,       # None, a boolean mask (True = take part) or a float bias
#       dropout_p=self.dropout if self.training else 0.0,
#   )
#   ```
#
#   `is_causal=True` replaces a lower-triangular mask buffer, and only that:
#   leave it off for an encoder (ViT, BERT) and when the queries are fewer
#   than the keys (decoding with a KV cache), where its mask is aligned to
#   the top left. A boolean `attn_mask` is True where a position *takes
#   part*, the opposite of `masked_fill`'s True; a float mask is added to the
#   scores (a relative-position or ALiBi bias). The scale defaults to
#   `1 / sqrt(head_dim)` (`scale=` sets another, PyTorch 2.1 and later). The
#   attention weights are not returned: code that returns or plots them
#   keeps the written-out path for that.
#
#   **How to confirm.** What stepdoctor matches: in a def, a softmax over the
#   last dimension (`F.softmax(..., dim=-1)`, `torch.softmax`, `.softmax(-1)`,
#   an `nn.Softmax(dim=-1)` module assigned in the file) of scores that come
#   from a product of activations with a transposed operand
#   (`q @ k.transpose(-2, -1)`, `k.mT`, `torch.matmul` / `torch.bmm` /
#   `baddbmm` with `.transpose` / `.permute`, a name assigned such a
#   transpose the statements before, or an `einsum` contracting the last index
#   of both inputs) whose result is multiplied again (`att @ v`), directly or
#   through names assigned from it (masked_fill, scaling, dropout); reported
#   at the softmax. Not reported: a softmax over another dimension (slot
#   attention's `dim=1`), a product with a parameter (`x @ self.w_gate.T`,
#   `fc.weight.t()`: a gate or a projection, not attention), and any file
#   that names a fused attention already (`scaled_dot_product_attention`
#   called, referenced or in a string, `flex_attention`, `flash_attn_func`
#   and its variants, xformers' `memory_efficient_attention`, Hugging Face's
#   `ALL_ATTENTION_FUNCTIONS` / `_attn_implementation` dispatch), as a
#   model that keeps the written-out path as its fallback does. In a trace,
#   the same attention shows as bmm / softmax kernels around each layer;
#   `torch.profiler` with `record_shapes=True` shows the T x T shapes.
#
#   **Impact estimate.** The script alone measures nothing, so the impact is a prior: 5% of step time (`impact`), with confidence "likely".
# custom:
#   id: manual-attention
#   severity: medium
#   category: script
#   requires: [features]
#   confidence: likely
#   params:
#     impact: 0.05
#   references:
#     - https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
#     - https://pytorch.org/tutorials/intermediate/scaled_dot_product_attention_tutorial.html
package stepdoctor.rules.manual_attention

import rego.v1

import data.stepdoctor.lib.script as slib

params := data.stepdoctor.params["manual-attention"]

finding contains f if {
	count(input.features.fused_attention) == 0
	some u in input.features.manual_attention
	f := {
		"msg": "attention written out by hand (softmax of q @ k^T, then @ v): F.scaled_dot_product_attention runs it as one fused kernel (FlashAttention, memory-efficient or cuDNN attention) that never stores the T x T attention weights",
		"impact": params.impact,
		"location": slib.loc(u),
	}
}
