"""Evaluation set for the structural matcher, exercise ``positional_encoding`` (written
when the prototype was measured; see ``attention_set.py`` for the roles).
The independent ``loops`` is alice's (sample class) table; the reference is added by the benchmark."""

CHECKS = """
    if d_model < 2 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
"""
INIT = """
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0), persistent=True)
    self.dropout = nn.Dropout(dropout)
"""
FORWARD = """
    if x.dim() != 3 or x.shape[-1] != self.pe.shape[2]:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if x.shape[1] > self.pe.shape[1]:
        raise ValueError(f"sequence length S must be <= max_len, got S={x.shape[1]}")
    return self.dropout(x + self.pe[:, :x.shape[1]].to(dtype=x.dtype, device=x.device))
"""

CHECKS_C = """
    if d_model % 2 != 0 or d_model < 2:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len <= 0:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
"""
COPIED = {
    "sinusoidal_table": CHECKS_C + """
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
""",
    "PositionalEncoding.__init__": """
    if dropout < 0.0 or dropout > 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    table = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", table[None], persistent=True)
    self.dropout = nn.Dropout(p=dropout)
""",
    "PositionalEncoding.forward": """
    length = x.size(1)
    if x.ndim != 3 or x.size(-1) != self.pe.size(-1):
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if length > self.pe.size(1):
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    return self.dropout(x + self.pe[:, :length].type_as(x))
""",
}
REWRITES = {
    "api": {  # equivalent API calls, keyword arguments, %-formatting, every statement
        "sinusoidal_table": """
    if not (d_model >= 2 and d_model % 2 == 0):
        raise ValueError("d_model must be a positive even number, got d_model=%d" % d_model)
    if not max_len >= 1:
        raise ValueError("max_len must be >= 1, got max_len=%d" % max_len)
    position = torch.arange(start=0, end=max_len, dtype=torch.float32)[:, None]
    div_term = torch.pow(torch.tensor(10000.0), torch.arange(start=0, end=d_model, step=2).float().neg() / d_model)
    angles = torch.outer(position.squeeze(1), div_term)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(start_dim=1)
""",
        "PositionalEncoding.__init__": """
    if not (0.0 <= dropout <= 1.0):
        raise ValueError("dropout must be in [0, 1], got dropout=%s" % (dropout,))
    self.register_buffer(name="pe", tensor=sinusoidal_table(max_len=max_len, d_model=d_model).unsqueeze(dim=0),
                         persistent=True)
    setattr(self, "dropout", nn.Dropout(p=dropout))
""",
        "PositionalEncoding.forward": """
    if len(x.shape) != 3 or x.shape[2] != self.pe.shape[2]:
        raise ValueError("x must have shape [B, S, d_model], got x.shape=%s" % (tuple(x.shape),))
    if not x.dtype.is_floating_point:
        raise ValueError("x must be a floating-point tensor, got x.dtype=%s" % (x.dtype,))
    if x.shape[1] > self.pe.shape[1]:
        raise ValueError("sequence length S must be <= max_len, got S=%d" % x.shape[1])
    return self.dropout(torch.add(x, self.pe.narrow(1, 0, x.shape[1]).to(x.dtype)))
""",
    },
    "three_address": {  # one operation per statement, dead statements between
        "sinusoidal_table": """
    odd = d_model % 2
    unused = odd + 1
    if odd != 0 or d_model < 2:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len <= 0:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
    pe = torch.zeros(max_len, d_model)
    unused = max_len * 2
    a = torch.arange(0, max_len)
    b = a.unsqueeze(1)
    position = b.float()
    unused = position.sum()
    c = torch.arange(0, d_model, 2)
    d = c.float()
    e = math.log(10000.0)
    f = -e
    g = f / d_model
    h = d * g
    div_term = torch.exp(h)
    unused = div_term.numel()
    arg = position * div_term
    s = torch.sin(arg)
    pe[:, 0::2] = s
    co = torch.cos(arg)
    pe[:, 1::2] = co
    return pe
""",
        "PositionalEncoding.__init__": """
    low = dropout < 0.0
    high = dropout > 1.0
    unused = low and high
    if low or high:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    table = sinusoidal_table(max_len, d_model)
    unused = table.shape
    batched = table[None]
    self.register_buffer("pe", batched, persistent=True)
    layer = nn.Dropout(p=dropout)
    self.dropout = layer
""",
        "PositionalEncoding.forward": """
    length = x.size(1)
    unused = length + 1
    rank = x.ndim
    width = x.size(-1)
    table_width = self.pe.size(-1)
    if rank != 3 or width != table_width:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    is_float = torch.is_floating_point(x)
    if not is_float:
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    limit = self.pe.size(1)
    if length > limit:
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    part = self.pe[:, :length]
    part = part.type_as(x)
    total = x + part
    return self.dropout(total)
""",
    },
    "inlined": {  # helpers inlined, unflatten/flatten, tuple unpacking
        "sinusoidal_table": CHECKS_C + """
    position, index = torch.arange(0, max_len).float(), torch.arange(0, d_model, 2).float()
    div_term = torch.exp(index * (-math.log(10000.0) / d_model))
    sin, cos = torch.sin(position[:, None] * div_term), torch.cos(position[:, None] * div_term)
    return torch.cat((sin.unsqueeze(-1), cos.unsqueeze(-1)), dim=-1).flatten(-2)
""",
        "PositionalEncoding.__init__": """
    if dropout < 0.0 or dropout > 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    pe, position = torch.zeros(max_len, d_model), torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div_term), torch.cos(position * div_term)
    self.register_buffer("pe", pe.unflatten(0, (1, max_len)), persistent=True)
    self.dropout = nn.Dropout(p=dropout)
""",
        "PositionalEncoding.forward": """
    (_, length, width), (_, limit, table_width) = (x.shape if x.ndim == 3 else (0, 0, -1)), self.pe.shape
    if width != table_width:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if length > limit:
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    return self.dropout(x + self.pe[:, :length].type_as(x))
""",
    },
}
INDEPENDENT = {
    "freqs": {"sinusoidal_table": """
    if d_model % 2 or d_model < 2 or max_len < 1:
        raise ValueError(f"bad sizes: d_model={d_model}, max_len={max_len}")
    freqs = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * freqs)
    pe[:, 1::2] = torch.cos(position * freqs)
    return pe.float()
""", "PositionalEncoding.__init__": """
    assert_ok = 0.0 <= dropout <= 1.0
    if not assert_ok:
        raise ValueError(f"dropout={dropout} is not in [0, 1]")
    self.drop = nn.Dropout(dropout)
    self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0))
""", "PositionalEncoding.forward": """
    b, s, d = x.shape if x.dim() == 3 else (None, None, None)
    if d != self.pe.shape[-1] or s > self.pe.shape[1] or not x.dtype.is_floating_point:
        raise ValueError(f"x must be a float [B, S<=max_len, d_model], got {tuple(x.shape)} {x.dtype}")
    return self.drop(x + self.pe[:, :s, :].to(x))
"""},
    "loops": {"sinusoidal_table": """
    if d_model <= 0 or d_model % 2:
        raise ValueError(f"d_model should be even and positive (got d_model={d_model})")
    if max_len < 1:
        raise ValueError(f"max_len should be at least 1 (got max_len={max_len})")
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / (10000.0 ** (i / d_model))
            table[pos, i] = math.sin(angle)
            table[pos, i + 1] = math.cos(angle)
    return table.float()
""", "PositionalEncoding.__init__": """
    if dropout < 0 or dropout > 1:
        raise ValueError(f"dropout should be between 0 and 1 (got dropout={dropout})")
    self.p = dropout
    self.dropout = nn.Dropout(self.p)
    big = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", big.reshape(1, max_len, d_model), persistent=True)
""", "PositionalEncoding.forward": """
    shape = tuple(x.shape)
    if len(shape) != 3:
        raise ValueError(f"x should be [B, S, d_model] (got x.shape={shape})")
    if shape[2] != self.pe.shape[2]:
        raise ValueError(f"last axis should be d_model={self.pe.shape[2]} (got x.shape={shape})")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise ValueError(f"x should be floating point (got x.dtype={x.dtype})")
    if shape[1] > self.pe.shape[1]:
        raise ValueError(f"S={shape[1]} is longer than max_len={self.pe.shape[1]}")
    added = x + self.pe[:, : shape[1]].to(device=x.device, dtype=x.dtype)
    return self.dropout(added)
"""},
    "outer": {"sinusoidal_table": """
    if max_len <= 0 or d_model <= 0 or d_model % 2 == 1:
        raise ValueError("max_len must be >= 1 and d_model a positive even number, got max_len=%d, d_model=%d"
                         % (max_len, d_model))
    inv = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    out = torch.stack([torch.sin(ang), torch.cos(ang)], dim=2).reshape(max_len, d_model)
    return out.to(torch.float32)
""", "PositionalEncoding.__init__": """
    if dropout > 1 or dropout < 0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    self.dropout = nn.Dropout(dropout)
    pe = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", pe.unsqueeze(0), persistent=True)
""", "PositionalEncoding.forward": """
    if x.dim() != 3:
        raise ValueError(f"x must be 3-D [B, S, d_model], got x.shape={tuple(x.shape)}")
    if x.size(2) != self.pe.size(2):
        raise ValueError(f"x's last dimension must be d_model={self.pe.size(2)}, got {x.size(2)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    n = x.size(1)
    if n > self.pe.size(1):
        raise ValueError(f"sequence length S must be <= max_len, got S={n}, max_len={self.pe.size(1)}")
    return self.dropout(x + self.pe[:, :n].to(dtype=x.dtype, device=x.device))
"""},
}

HELPERS = {}
