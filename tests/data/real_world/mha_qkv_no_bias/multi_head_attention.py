"""Multi-head attention in the style of an LLM course: query/key/value projections with qkv_bias=False."""
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    b, num_tokens, d_out = x.shape
    if d_out % num_heads != 0:
        raise ValueError(f"d_out must be divisible by num_heads, got d_out={d_out}, num_heads={num_heads}")
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def merge_heads(x):
    b, h, num_tokens, d = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_tokens, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True, qkv_bias=False):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model must be divisible by num_heads, got d_model={d_model}, num_heads={num_heads}")
        self.d_out = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        b, num_tokens, _ = query.shape
        k_tokens = key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, k_tokens):
            raise ValueError(f"key_padding_mask must be [{b}, {k_tokens}], got {tuple(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (num_tokens, k_tokens):
            raise ValueError(f"attn_mask must be [{num_tokens}, {k_tokens}], got {tuple(attn_mask.shape)}")
        queries = split_heads(self.q_proj(query), self.num_heads)
        keys = split_heads(self.k_proj(key), self.num_heads)
        values = split_heads(self.v_proj(value), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = torch.zeros(b, 1, num_tokens, k_tokens, dtype=torch.bool, device=query.device)
        if attn_mask is not None:
            mask_bool = mask_bool | attn_mask
        if key_padding_mask is not None:
            mask_bool = mask_bool | key_padding_mask[:, None, None, :]
        attn_scores = attn_scores.masked_fill(mask_bool, torch.finfo(attn_scores.dtype).min)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = attn_weights.masked_fill(mask_bool.all(-1, keepdim=True), 0.0)
        attn_weights = self.dropout(attn_weights)
        context_vec = merge_heads(attn_weights @ values)
        out = self.out_proj(context_vec)
        if not need_weights:
            return out, None
        return out, attn_weights.mean(dim=1) if average_attn_weights else attn_weights
