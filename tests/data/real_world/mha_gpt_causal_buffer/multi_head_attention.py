"""GPT-style self-attention adapted to the kit's API: it keeps its own causal mask buffer and applies
it in every call."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def split_heads(x, num_heads):
    B, T, C = x.size()
    if C % num_heads != 0:
        raise ValueError(f"n_embd={C} must be divisible by n_head={num_heads}")
    return x.view(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x):
    B, nh, T, hs = x.size()
    return x.transpose(1, 2).contiguous().view(B, T, nh * hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True, block_size=256):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"n_embd={d_model} must be divisible by n_head={num_heads}")
        self.n_head = self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size),
                             persistent=False)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        B, T, C = query.size()
        S = key.size(1)
        if key_padding_mask is not None and key_padding_mask.shape != (B, S):
            raise ValueError(f"key_padding_mask must be (B, S) = ({B}, {S}), got {tuple(key_padding_mask.shape)}")
        if attn_mask is not None and attn_mask.shape != (T, S):
            raise ValueError(f"attn_mask must be (T, S) = ({T}, {S}), got {tuple(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.n_head)
        k = split_heads(self.k_proj(key), self.n_head)
        v = split_heads(self.v_proj(value), self.n_head)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :S] == 0, float("-inf"))
        if attn_mask is not None:
            att = att.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            att = att.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        att = F.softmax(att, dim=-1).nan_to_num(0.0)
        att = self.attn_dropout(att)
        y = self.out_proj(merge_heads(att @ v))
        if not need_weights:
            return y, None
        return y, att.mean(dim=1) if average_attn_weights else att
