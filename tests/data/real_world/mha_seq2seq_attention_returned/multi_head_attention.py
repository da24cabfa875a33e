"""The multi-head attention layer of a seq2seq course (fc_q, fc_k, fc_v, fc_o), adapted to the kit's
masks: the attention it returns is the one before dropout."""
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    b, s, d = x.shape
    if d % num_heads != 0:
        raise ValueError(f"d_model % num_heads != 0: d_model={d}, num_heads={num_heads}")
    return x.view(b, s, num_heads, d // num_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(b, s, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model % num_heads != 0: d_model={d_model}, num_heads={num_heads}")
        self.hid_dim = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.fc_q = nn.Linear(d_model, d_model, bias=bias)
        self.fc_k = nn.Linear(d_model, d_model, bias=bias)
        self.fc_v = nn.Linear(d_model, d_model, bias=bias)
        self.fc_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("scale", torch.sqrt(torch.FloatTensor([self.head_dim])), persistent=False)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        batch_size, q_len, k_len = query.shape[0], query.shape[1], key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (batch_size, k_len):
            raise ValueError(f"key_padding_mask must be [B, S_k] = [{batch_size}, {k_len}], "
                             f"got {tuple(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (q_len, k_len):
            raise ValueError(f"attn_mask must be [S_q, S_k] = [{q_len}, {k_len}], got {tuple(attn_mask.shape)}")
        # the course's masks are True = keep
        mask = torch.ones(batch_size, 1, q_len, k_len, dtype=torch.bool, device=query.device)
        if key_padding_mask is not None:
            mask = mask & ~key_padding_mask[:, None, None, :]
        if attn_mask is not None:
            mask = mask & ~attn_mask
        Q = split_heads(self.fc_q(query), self.num_heads)
        K = split_heads(self.fc_k(key), self.num_heads)
        V = split_heads(self.fc_v(value), self.num_heads)
        energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / self.scale.to(Q.dtype)
        energy = energy.masked_fill(mask == 0, torch.finfo(energy.dtype).min)
        attention = torch.softmax(energy, dim=-1) * mask.any(dim=-1, keepdim=True)
        x = torch.matmul(self.dropout(attention), V)
        x = self.fc_o(merge_heads(x))
        if not need_weights:
            return x, None
        return x, attention.mean(dim=1) if average_attn_weights else attention
