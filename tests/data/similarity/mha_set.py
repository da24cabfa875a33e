"""Evaluation set for the structural matcher, exercise ``multi_head_attention`` (see
``attention_set.py`` for the roles of ``copied``, the rewrites and ``ind_*``)."""

INIT = """
    if num_heads < 1 or d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} must be a multiple of num_heads={num_heads} >= 1")
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be in [0, 1], got {dropout}")
    self.d_model = d_model
    self.num_heads = num_heads
    self.head_dim = d_model // num_heads
    self.dropout = dropout
    self.q_proj = nn.Linear(d_model, d_model, bias=bias)
    self.k_proj = nn.Linear(d_model, d_model, bias=bias)
    self.v_proj = nn.Linear(d_model, d_model, bias=bias)
    self.out_proj = nn.Linear(d_model, d_model, bias=bias)
"""
CHECKS = """
    for t in (query, key, value):
        if t.dim() != 3 or t.size(-1) != self.d_model:
            raise ValueError(f"inputs must be [B, S, {self.d_model}], got {tuple(t.shape)}")
    b, s_q, _ = query.shape
    s_k = key.size(1)
    if key.size(0) != b or value.size(0) != b or value.size(1) != s_k:
        raise ValueError(f"query, key, value disagree: {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, s_k):
        raise ValueError(f"key_padding_mask must be [{b}, {s_k}], got {tuple(key_padding_mask.shape)}")
    if attn_mask is not None and tuple(attn_mask.shape) != (s_q, s_k):
        raise ValueError(f"attn_mask must be [{s_q}, {s_k}], got {tuple(attn_mask.shape)}")
"""
TAIL = """
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.mean(dim=1)
    return out, weights
"""
COPIED = {
    "split_heads": """
    if x.dim() != 3:
        raise ValueError(f"expected [B, S, D], got {tuple(x.shape)}")
    if num_heads < 1:
        raise ValueError(f"num_heads must be positive, got {num_heads}")
    b, s, d = x.shape
    if d % num_heads:
        raise ValueError(f"D={d} is not divisible by num_heads={num_heads}")
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 2)
""",
    "merge_heads": """
    if x.dim() != 4:
        raise ValueError(f"expected [B, H, S, d], got {tuple(x.shape)}")
    b, h, s, hd = x.shape
    return x.transpose(1, 2).contiguous().view(b, s, h * hd)
""",
    "MultiHeadAttention.__init__": INIT,
    "MultiHeadAttention.forward": CHECKS + """
    mask = combine_masks(attn_mask, key_padding_mask)
    q = split_heads(self.q_proj(query), self.num_heads)
    k = split_heads(self.k_proj(key), self.num_heads)
    v = split_heads(self.v_proj(value), self.num_heads)
    p = self.dropout if self.training else 0.0
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=p)
    out = self.out_proj(merge_heads(out))
""" + TAIL,
}
REWRITES = {
    "api": {
        "split_heads": """
    if x.dim() != 3:
        raise ValueError("expected [B, S, D], got %s" % (tuple(x.shape),))
    if num_heads < 1:
        raise ValueError("num_heads must be positive, got %d" % num_heads)
    b, s, d = x.shape
    if d % num_heads:
        raise ValueError("D=%d is not divisible by num_heads=%d" % (d, num_heads))
    return torch.stack(x.chunk(chunks=num_heads, dim=-1), dim=1)
""",
        "merge_heads": """
    if x.dim() != 4:
        raise ValueError("expected [B, H, S, d], got {}".format(tuple(x.shape)))
    b, h, s, hd = x.shape
    return torch.cat(x.unbind(dim=1), dim=-1)
""",
        "MultiHeadAttention.__init__": """
    if num_heads < 1 or d_model % num_heads != 0:
        raise ValueError("d_model=%d must be a multiple of num_heads=%d >= 1" % (d_model, num_heads))
    if not 0.0 <= dropout <= 1.0:
        raise ValueError("dropout must be in [0, 1], got %s" % dropout)
    self.d_model, self.num_heads, self.head_dim, self.dropout = d_model, num_heads, d_model // num_heads, dropout
    for name in ("q", "k", "v", "out"):
        setattr(self, f"{name}_proj", nn.Linear(in_features=d_model, out_features=d_model, bias=bias))
""",
        "MultiHeadAttention.forward": """
    for t in (query, key, value):
        if t.ndim != 3 or t.shape[2] != self.d_model:
            raise ValueError("inputs must be [B, S, %d], got %s" % (self.d_model, tuple(t.shape)))
    b, s_q, _ = query.shape
    s_k = key.shape[1]
    if key.shape[0] != b or value.shape[0] != b or value.shape[1] != s_k:
        raise ValueError("query, key, value disagree: %s, %s, %s" % (tuple(query.shape), tuple(key.shape), tuple(value.shape)))
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, s_k):
        raise ValueError("key_padding_mask must be [%d, %d], got %s" % (b, s_k, tuple(key_padding_mask.shape)))
    if attn_mask is not None and tuple(attn_mask.shape) != (s_q, s_k):
        raise ValueError("attn_mask must be [%d, %d], got %s" % (s_q, s_k, tuple(attn_mask.shape)))
    mask = combine_masks(attn_mask=attn_mask, key_padding_mask=key_padding_mask)
    q = split_heads(x=self.q_proj(query), num_heads=self.num_heads)
    k = split_heads(x=self.k_proj(key), num_heads=self.num_heads)
    v = split_heads(x=self.v_proj(value), num_heads=self.num_heads)
    p = self.dropout if self.training else 0.0
    out, weights = scaled_dot_product_attention(query=q, key=k, value=v, mask=mask, dropout_p=p)
    out = self.out_proj(merge_heads(x=out))
""" + TAIL,
    },
    "three_address": {
        "split_heads": """
    rank = x.dim()
    unused = rank * 2
    if rank != 3:
        raise ValueError(f"expected [B, S, D], got {tuple(x.shape)}")
    if num_heads < 1:
        raise ValueError(f"num_heads must be positive, got {num_heads}")
    b, s, d = x.shape
    rest = d % num_heads
    unused = rest + 1
    if rest:
        raise ValueError(f"D={d} is not divisible by num_heads={num_heads}")
    width = d // num_heads
    viewed = x.view(b, s, num_heads, width)
    unused = viewed.shape
    out = viewed.transpose(1, 2)
    return out
""",
        "merge_heads": """
    rank = x.dim()
    if rank != 4:
        raise ValueError(f"expected [B, H, S, d], got {tuple(x.shape)}")
    b, h, s, hd = x.shape
    unused = b + h
    total = h * hd
    swapped = x.transpose(1, 2)
    dense = swapped.contiguous()
    unused = dense.numel()
    merged = dense.view(b, s, total)
    return merged
""",
        "MultiHeadAttention.__init__": INIT,
        "MultiHeadAttention.forward": CHECKS + """
    mask = combine_masks(attn_mask, key_padding_mask)
    unused = mask is None
    h = self.num_heads
    pq = self.q_proj(query)
    q = split_heads(pq, h)
    pk = self.k_proj(key)
    unused = pk.shape
    k = split_heads(pk, h)
    pv = self.v_proj(value)
    v = split_heads(pv, h)
    p = self.dropout if self.training else 0.0
    unused = p * 2
    pair = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=p)
    heads = pair[0]
    weights = pair[1]
    merged = merge_heads(heads)
    out = self.out_proj(merged)
""" + TAIL,
    },
    "inlined": {
        "split_heads": COPIED["split_heads"],
        "merge_heads": COPIED["merge_heads"],
        "MultiHeadAttention.__init__": INIT,
        "MultiHeadAttention.forward": CHECKS + """
    mask = combine_masks(attn_mask, key_padding_mask)
    h, hd = self.num_heads, self.head_dim
    q, k, v = (self.q_proj(query).unflatten(-1, (h, hd)).transpose(1, 2),
               self.k_proj(key).unflatten(-1, (h, hd)).transpose(1, 2),
               self.v_proj(value).unflatten(-1, (h, hd)).transpose(1, 2))
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=self.dropout if self.training else 0.0)
    out = self.out_proj(out.transpose(1, 2).flatten(2))
""" + TAIL,
    },
}

INDEPENDENT = {
    "permute": {
        "split_heads": """
    if len(x.shape) != 3 or num_heads <= 0 or x.shape[-1] % num_heads != 0:
        raise ValueError("cannot split x of shape %s into %s heads" % (tuple(x.shape), num_heads))
    B, S, D = x.shape
    return x.reshape(B, S, num_heads, -1).permute(0, 2, 1, 3)
""",
        "merge_heads": """
    if len(x.shape) != 4:
        raise ValueError("x must be 4-D")
    B, H, S, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, S, H * d)
""",
        "MultiHeadAttention.__init__": """
    if num_heads <= 0 or d_model % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    if dropout < 0 or dropout > 1:
        raise ValueError("dropout must be a probability")
    self.num_heads, self.head_dim, self.dropout = num_heads, d_model // num_heads, dropout
    self.q_proj, self.k_proj = nn.Linear(d_model, d_model, bias), nn.Linear(d_model, d_model, bias)
    self.v_proj, self.out_proj = nn.Linear(d_model, d_model, bias), nn.Linear(d_model, d_model, bias)
""",
        "MultiHeadAttention.forward": """
    D = self.num_heads * self.head_dim
    if any(t.dim() != 3 or t.shape[-1] != D for t in (query, key, value)):
        raise ValueError("query, key and value must be [B, S, d_model]")
    if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
        raise ValueError("batch or key length mismatch")
    if key_padding_mask is not None and key_padding_mask.shape != key.shape[:2]:
        raise ValueError("key_padding_mask must be [B, S_k]")
    if attn_mask is not None and attn_mask.shape != (query.shape[1], key.shape[1]):
        raise ValueError("attn_mask must be [S_q, S_k]")
    mask = None
    if attn_mask is not None:
        mask = attn_mask[None, None]
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        mask = pad if mask is None else (mask | pad)
    heads = [split_heads(proj(t), self.num_heads) for proj, t in
             ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))]
    ctx, attn = scaled_dot_product_attention(*heads, mask, self.dropout if self.training else 0.0)
    result = self.out_proj(merge_heads(ctx))
    if need_weights:
        return result, (attn.mean(1) if average_attn_weights else attn)
    return result, None
""",
    },
    "inline_softmax": {
        "split_heads": """
    if x.ndim != 3:
        raise ValueError(f"split_heads wants [B, S, D] (got {list(x.shape)})")
    if num_heads < 1 or x.size(2) % num_heads:
        raise ValueError(f"{x.size(2)} features cannot make {num_heads} heads")
    return x.unflatten(2, (num_heads, x.size(2) // num_heads)).transpose(1, 2)
""",
        "merge_heads": """
    if x.ndim != 4:
        raise ValueError(f"merge_heads wants [B, H, S, d] (got {list(x.shape)})")
    return x.transpose(1, 2).flatten(start_dim=2)
""",
        "MultiHeadAttention.__init__": """
    if num_heads < 1:
        raise ValueError("need at least one head")
    if d_model % num_heads != 0:
        raise ValueError("d_model % num_heads != 0")
    if not (0.0 <= dropout <= 1.0):
        raise ValueError("dropout outside [0, 1]")
    self.num_heads = num_heads
    self.head_dim = d_model // num_heads
    self.dropout = dropout
    self.scale = self.head_dim ** -0.5
    self.q_proj = nn.Linear(d_model, d_model, bias=bias)
    self.k_proj = nn.Linear(d_model, d_model, bias=bias)
    self.v_proj = nn.Linear(d_model, d_model, bias=bias)
    self.out_proj = nn.Linear(d_model, d_model, bias=bias)
""",
        "MultiHeadAttention.forward": """
    width = self.num_heads * self.head_dim
    for label, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim != 3 or t.size(2) != width:
            raise ValueError(f"{label} must be [B, S, {width}] (got {list(t.shape)})")
    if not (query.size(0) == key.size(0) == value.size(0)) or key.size(1) != value.size(1):
        raise ValueError("batch sizes or key lengths differ")
    if key_padding_mask is not None and list(key_padding_mask.shape) != [key.size(0), key.size(1)]:
        raise ValueError(f"key_padding_mask must be [B, S_k] (got {list(key_padding_mask.shape)})")
    if attn_mask is not None and list(attn_mask.shape) != [query.size(1), key.size(1)]:
        raise ValueError(f"attn_mask must be [S_q, S_k] (got {list(attn_mask.shape)})")
    q = split_heads(self.q_proj(query), self.num_heads) * self.scale
    k = split_heads(self.k_proj(key), self.num_heads)
    v = split_heads(self.v_proj(value), self.num_heads)
    logits = q @ k.transpose(-2, -1)
    blocked = combine_masks(attn_mask, key_padding_mask)
    if blocked is not None:
        logits = logits.masked_fill(blocked, float("-inf"))
    w = torch.softmax(logits, dim=-1)
    w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
    if self.training and self.dropout > 0:
        w = nn.functional.dropout(w, self.dropout)
    y = self.out_proj(merge_heads(w @ v))
    if not need_weights:
        return y, None
    return y, w.mean(dim=1) if average_attn_weights else w
""",
    },
    "per_head": {
        "split_heads": """
    if x.dim() != 3:
        raise ValueError("x must be 3-D")
    if num_heads < 1 or x.shape[2] % num_heads:
        raise ValueError("bad num_heads")
    step = x.shape[2] // num_heads
    parts = [x[:, :, i * step:(i + 1) * step] for i in range(num_heads)]
    return torch.stack(parts, dim=1)
""",
        "merge_heads": """
    if x.dim() != 4:
        raise ValueError("x must be 4-D")
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)
""",
        "MultiHeadAttention.__init__": """
    if num_heads < 1 or d_model % num_heads:
        raise ValueError(f"cannot use {num_heads} heads with d_model={d_model}")
    if dropout < 0.0 or dropout > 1.0:
        raise ValueError(f"dropout={dropout}")
    self.num_heads = num_heads
    self.head_dim = d_model // num_heads
    self.dropout = float(dropout)
    self.q_proj = nn.Linear(d_model, d_model, bias=bias)
    self.k_proj = nn.Linear(d_model, d_model, bias=bias)
    self.v_proj = nn.Linear(d_model, d_model, bias=bias)
    self.out_proj = nn.Linear(d_model, d_model, bias=bias)
""",
        "MultiHeadAttention.forward": """
    d = self.num_heads * self.head_dim
    if query.dim() != 3 or key.dim() != 3 or value.dim() != 3:
        raise ValueError("inputs must be 3-D")
    if query.shape[2] != d or key.shape[2] != d or value.shape[2] != d:
        raise ValueError("inputs must have d_model features")
    if key.shape[0] != query.shape[0] or value.shape[0] != query.shape[0] or key.shape[1] != value.shape[1]:
        raise ValueError("inputs disagree on B or S_k")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != tuple(key.shape[:2]):
        raise ValueError("key_padding_mask must be [B, S_k]")
    if attn_mask is not None and tuple(attn_mask.shape) != (query.shape[1], key.shape[1]):
        raise ValueError("attn_mask must be [S_q, S_k]")
    mask = combine_masks(attn_mask, key_padding_mask)
    q = split_heads(self.q_proj(query), self.num_heads)
    k = split_heads(self.k_proj(key), self.num_heads)
    v = split_heads(self.v_proj(value), self.num_heads)
    outs, maps = [], []
    for i in range(self.num_heads):
        m = None if mask is None else mask[:, 0]
        o, a = scaled_dot_product_attention(q[:, i], k[:, i], v[:, i], m, self.dropout if self.training else 0.0)
        outs.append(o)
        maps.append(a)
    out = self.out_proj(merge_heads(torch.stack(outs, dim=1)))
    weights = torch.stack(maps, dim=1)
    if not need_weights:
        return out, None
    return out, (weights.mean(dim=1) if average_attn_weights else weights)
""",
    },
}

HELPERS = {}
