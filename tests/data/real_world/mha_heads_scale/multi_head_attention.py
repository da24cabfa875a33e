"""Multi-head attention that scales by k.size(1) after splitting the heads (the head count, not head_dim)."""
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    batch, length, d_model = x.size()
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)


def merge_heads(x):
    batch, heads, length, d = x.size()
    return x.transpose(1, 2).reshape(batch, length, heads * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        b, s_q, _ = query.shape
        s_k = key.shape[1]
        if key_padding_mask is not None and key_padding_mask.shape != (b, s_k):
            raise ValueError(f"key_padding_mask should be [{b}, {s_k}], got {list(key_padding_mask.shape)}")
        if attn_mask is not None and attn_mask.shape != (s_q, s_k):
            raise ValueError(f"attn_mask should be [{s_q}, {s_k}], got {list(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        scores = torch.matmul(q, k.transpose(-2, -1)) / (k.size(1) ** 0.5)
        blocked = torch.zeros(b, 1, s_q, s_k, dtype=torch.bool, device=q.device)
        if attn_mask is not None:
            blocked = blocked | attn_mask[None, None]
        if key_padding_mask is not None:
            blocked = blocked | key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        weights = self.attn_dropout(weights)
        out = self.out_proj(merge_heads(weights @ v))
        if not need_weights:
            return out, None
        return out, weights.mean(1) if average_attn_weights else weights
