"""Evaluation set for the structural matcher, exercise ``attention``: function bodies that fill
the stub (see ``evasion.py``). ``copied`` is one student's correct solution; ``api``,
``three_address`` and ``inlined`` are the issue's three rewrites of it; ``ind_*`` are correct
solutions written independently, in other students' styles."""

HELPER = '''
def _check_inputs(query, key, value, dropout_p):
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"inputs need at least 2 dimensions, got {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if key.size(-1) != query.size(-1):
        raise ValueError(f"query and key disagree on d_k: {query.size(-1)} vs {key.size(-1)}")
    if key.size(-2) != value.size(-2):
        raise ValueError(f"key and value disagree on S_k: {key.size(-2)} vs {value.size(-2)}")
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got {dropout_p}")
    return query.size(-1)
'''

COPIED = {"scaled_dot_product_attention": """
    d_k = _check_inputs(query, key, value, dropout_p)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    weights = masked_softmax(scores, mask, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p, training=True)
    output = torch.matmul(weights, value)
    return output, weights
"""}

REWRITES = {
    "api": {"scaled_dot_product_attention": """
    d_k = _check_inputs(query=query, key=key, value=value, dropout_p=dropout_p)
    scores = query.matmul(key.mT).div(d_k ** 0.5)
    weights = masked_softmax(scores=scores, mask=mask, dim=-1)
    if dropout_p > 0.0:
        weights = torch.nn.functional.dropout(input=weights, p=dropout_p, training=True)
    return weights.matmul(value), weights
"""},
    "three_address": {"scaled_dot_product_attention": """
    d_k = _check_inputs(query, key, value, dropout_p)
    unused = d_k + 1
    kt = key.transpose(-2, -1)
    raw = torch.matmul(query, kt)
    unused = raw.shape
    root = math.sqrt(d_k)
    scores = raw / root
    unused = scores.sum()
    weights = masked_softmax(scores, mask, dim=-1)
    positive = dropout_p > 0.0
    if positive:
        dropped = F.dropout(weights, p=dropout_p, training=True)
        weights = dropped
    unused = weights.numel()
    output = torch.matmul(weights, value)
    pair = (output, weights)
    return pair
"""},
    "inlined": {"scaled_dot_product_attention": """
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"inputs need at least 2 dimensions, got {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    (d_q, d_k), (s_k, s_v) = (query.size(-1), key.size(-1)), (key.size(-2), value.size(-2))
    if d_k != d_q:
        raise ValueError(f"query and key disagree on d_k: {d_q} vs {d_k}")
    if s_k != s_v:
        raise ValueError(f"key and value disagree on S_k: {s_k} vs {s_v}")
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got {dropout_p}")
    weights = masked_softmax(torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_q), mask, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p, training=True)
    return torch.matmul(weights, value), weights
"""},
}
HELPERS = {"copied": HELPER, "api": HELPER, "three_address": HELPER}

INDEPENDENT = {
    "einsum": {"scaled_dot_product_attention": """
    for t in (query, key, value):
        if t.ndim < 2:
            raise ValueError("attention needs tensors of rank >= 2")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"shapes do not match: {query.shape}, {key.shape}, {value.shape}")
    if not (0 <= dropout_p <= 1):
        raise ValueError("bad dropout_p")
    q = query * query.shape[-1] ** -0.5
    logits = torch.einsum("...qd,...kd->...qk", q, key)
    if mask is not None:
        logits = logits.masked_fill(mask, float("-inf"))
    attn = torch.softmax(logits, dim=-1).nan_to_num(0.0)
    if dropout_p:
        attn = F.dropout(attn, dropout_p)
    return torch.einsum("...qk,...kv->...qv", attn, value), attn
"""},
    "explicit": {"scaled_dot_product_attention": """
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise ValueError("need at least 2-D inputs")
    dk = query.shape[-1]
    if key.shape[-1] != dk:
        raise ValueError("d_k mismatch")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError("S_k mismatch")
    if dropout_p > 1 or dropout_p < 0:
        raise ValueError("dropout_p out of range")
    s = query @ key.transpose(-1, -2)
    s = s / dk ** 0.5
    if mask is not None:
        s = s.masked_fill(mask, -1e30)
    s = s - s.amax(dim=-1, keepdim=True)
    e = torch.exp(s)
    if mask is not None:
        e = e * (~mask)
    total = e.sum(dim=-1, keepdim=True)
    w = e / total.clamp_min(1e-30)
    if dropout_p > 0:
        w = F.dropout(w, p=dropout_p)
    return w @ value, w
"""},
    "bmm": {"scaled_dot_product_attention": """
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"got ranks {query.dim()}, {key.dim()}, {value.dim()}; need >= 2")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"d_k differs: {query.size(-1)} != {key.size(-1)}")
    if key.size(-2) != value.size(-2):
        raise ValueError(f"S_k differs: {key.size(-2)} != {value.size(-2)}")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p={dropout_p} is not a probability")
    scale = 1.0 / math.sqrt(key.size(-1))
    weights = masked_softmax(scale * (query @ key.transpose(-2, -1)), mask)
    weights = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    out = weights @ value
    return out, weights
"""},
    "assertive": {"scaled_dot_product_attention": """
    try:
        scores = query.matmul(key.transpose(-2, -1))
    except RuntimeError as err:
        raise ValueError(str(err)) from None
    if query.dim() < 2 or value.dim() < 2 or key.size(-2) != value.size(-2):
        raise ValueError("key and value must have the same S_k (and inputs >= 2-D)")
    if dropout_p < 0 or dropout_p > 1:
        raise ValueError("dropout_p must be in [0, 1]")
    scores = scores / torch.sqrt(torch.tensor(float(query.shape[-1])))
    probs = masked_softmax(scores, mask, dim=-1)
    if dropout_p > 0:
        probs = torch.nn.functional.dropout(probs, dropout_p, True)
    return probs.matmul(value), probs
"""},
}
