# METADATA
# title: Attention written out by hand instead of a fused kernel
# description: |
#   **Why it matters.** `softmax(q @ k.transpose(-2, -1) * scale) @ v` runs
#   as separate kernels (a batched GEMM, the scaling and mask, the softmax,
#   dropout, a second GEMM) and writes the whole T x T score matrix of every
#   head to memory and reads it back, several times, in the forward and again
#   in the backward. `F.scaled_dot_product_attention` (PyTorch 2.0 and later)
#   picks a fused kernel instead: FlashAttention (fp16 / bf16 on Ampere and
#   newer NVIDIA GPUs, and on ROCm), memory-efficient attention (also float32
#   and older GPUs), or the math path as a last resort. The fused kernels never
#   store the score matrix, so attention's memory grows with T instead of T²
#   and the time saved grows with the sequence length.
#
#   **Fix.**
#
#   ```python
#   import torch.nn.functional as F
#   # replaces: att = (q @ k.transpose(-2, -1)) * scale; att.masked_fill(...);
#   #           F.softmax(att, dim=-1); dropout; att @ v
#   y = F.scaled_dot_product_attention(
#       q, k, v,                       # (B, heads, T, head_dim)
#       is_causal=True,                # instead of a lower-triangular mask buffer
#       dropout_p=self.dropout if self.training else 0.0,
#   )
#   ```
#
#   Any other mask goes in `attn_mask=`: a boolean mask is True where a
#   position *takes part* (the opposite of `masked_fill`'s True), a float mask
#   is added to the scores. The scale defaults to `1 / sqrt(head_dim)`
#   (`scale=` sets another, PyTorch 2.1 and later). The attention weights are
#   not returned: code that plots them keeps the written-out path for that.
#
#   **How to confirm.** What stepdoctor matches: in a def, a softmax
#   (`F.softmax`, `torch.softmax`, `.softmax`) over scores that come from a
#   product with a transposed operand (`q @ k.transpose(-2, -1)`, `k.mT`,
#   `torch.matmul` / `torch.bmm` with `.transpose` / `.permute`, or an
#   `einsum` contracting the last index of both inputs) whose result is
#   multiplied again (`att @ v`), directly or through names assigned from it
#   (masked_fill, scaling, dropout); reported at the softmax. Not reported when
#   the file calls a fused attention already (`scaled_dot_product_attention`,
#   `flex_attention`, `flash_attn`, xformers' `memory_efficient_attention`),
#   as a script that keeps the written-out path as a fallback does. In a
#   trace, the same attention shows as bmm / softmax kernels around each
#   layer; `torch.profiler` with `record_shapes=True` shows the T x T shapes.
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
		"msg": "attention written out by hand (softmax of q @ k^T, then @ v): F.scaled_dot_product_attention runs it as one fused kernel (FlashAttention or memory-efficient) without storing the T x T score matrix",
		"impact": params.impact,
		"location": slib.loc(u),
	}
}
