"""Evaluation set for the structural matcher, exercise ``encoder`` (see ``attention_set.py`` for the
roles). The exercise is short and its computation prescribed (the contract names the attributes and
the stub's hints give both orders of the residual blocks), so independent solutions look alike."""

HELPER = '''
def _sa_block(layer, x, mask):
    out, _ = layer.self_attn(x, x, x, key_padding_mask=mask, need_weights=False)
    return layer.dropout1(out)


def _ff_block(layer, x):
    return layer.dropout2(layer.feed_forward(x))
'''
INIT = """
    self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
    self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
    self.norm1 = nn.LayerNorm(d_model)
    self.norm2 = nn.LayerNorm(d_model)
    self.dropout1 = nn.Dropout(dropout)
    self.dropout2 = nn.Dropout(dropout)
    self.norm_first = norm_first
"""
STACK_INIT = """
    if num_layers < 0:
        raise ValueError(f"need num_layers >= 0, got {num_layers}")
    self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)])
    self.norm = nn.LayerNorm(d_model) if norm_first else None
"""
STACK_FORWARD = """
    for layer in self.layers:
        x = layer(x, key_padding_mask)
    return self.norm(x) if self.norm is not None else x
"""
COPIED = {
    "EncoderLayer.__init__": INIT,
    "EncoderLayer.forward": """
    if self.norm_first:
        x = x + _sa_block(self, self.norm1(x), key_padding_mask)
        x = x + _ff_block(self, self.norm2(x))
    else:
        x = self.norm1(x + _sa_block(self, x, key_padding_mask))
        x = self.norm2(x + _ff_block(self, x))
    return x
""",
    "Encoder.__init__": STACK_INIT,
    "Encoder.forward": STACK_FORWARD,
}
REWRITES = {
    "api": {
        "EncoderLayer.__init__": """
    self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
    self.feed_forward = PositionwiseFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)
    for i in (1, 2):
        setattr(self, f"norm{i}", nn.LayerNorm(normalized_shape=d_model))
        setattr(self, "dropout%d" % i, nn.Dropout(p=dropout))
    self.norm_first = norm_first
""",
        "EncoderLayer.forward": """
    if self.norm_first:
        x = torch.add(x, _sa_block(layer=self, x=self.norm1(x), mask=key_padding_mask))
        x = torch.add(x, _ff_block(layer=self, x=self.norm2(x)))
    else:
        x = self.norm1(torch.add(x, _sa_block(layer=self, x=x, mask=key_padding_mask)))
        x = self.norm2(torch.add(x, _ff_block(layer=self, x=x)))
    return x
""",
        "Encoder.__init__": """
    if num_layers < 0:
        raise ValueError("need num_layers >= 0, got %d" % num_layers)
    self.layers = nn.ModuleList([EncoderLayer(d_model=d_model, num_heads=num_heads, d_ff=d_ff, dropout=dropout,
                                              norm_first=norm_first) for _ in range(num_layers)])
    self.norm = nn.LayerNorm(normalized_shape=d_model) if norm_first else None
""",
        "Encoder.forward": """
    for layer in self.layers:
        x = layer(x=x, key_padding_mask=key_padding_mask)
    return self.norm(x) if self.norm is not None else x
""",
    },
    "three_address": {
        "EncoderLayer.__init__": INIT,
        "EncoderLayer.forward": """
    pre = self.norm_first
    unused = not pre
    if pre:
        h = self.norm1(x)
        a = _sa_block(self, h, key_padding_mask)
        x = x + a
        unused = a.shape
        h2 = self.norm2(x)
        f = _ff_block(self, h2)
        x = x + f
    else:
        a = _sa_block(self, x, key_padding_mask)
        unused = a.sum()
        s = x + a
        x = self.norm1(s)
        f = _ff_block(self, x)
        s2 = x + f
        x = self.norm2(s2)
    return x
""",
        "Encoder.__init__": """
    negative = num_layers < 0
    if negative:
        raise ValueError(f"need num_layers >= 0, got {num_layers}")
    blocks = [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)]
    unused = len(blocks)
    self.layers = nn.ModuleList(blocks)
    final = nn.LayerNorm(d_model) if norm_first else None
    self.norm = final
""",
        "Encoder.forward": """
    for layer in self.layers:
        y = layer(x, key_padding_mask)
        unused = y.shape
        x = y
    has_norm = self.norm is not None
    out = self.norm(x) if has_norm else x
    return out
""",
    },
    "inlined": {
        "EncoderLayer.__init__": INIT,
        "EncoderLayer.forward": """
    if self.norm_first:
        h = self.norm1(x)
        out, _ = self.self_attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)
        x = x + self.dropout1(out)
        x = x + self.dropout2(self.feed_forward(self.norm2(x)))
    else:
        out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        x = self.norm1(x + self.dropout1(out))
        x = self.norm2(x + self.dropout2(self.feed_forward(x)))
    return x
""",
        "Encoder.__init__": STACK_INIT,
        "Encoder.forward": STACK_FORWARD,
    },
}
HELPERS = {"copied": HELPER, "api": HELPER, "three_address": HELPER}

INDEPENDENT = {
    "residual": {
        "EncoderLayer.__init__": """
    self.norm_first = bool(norm_first)
    self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
    self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
    self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
    self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
""",
        "EncoderLayer.forward": """
    residual = x
    if self.norm_first:
        x = self.norm1(x)
    x = self.self_attn(x, x, x, key_padding_mask, need_weights=False)[0]
    x = residual + self.dropout1(x)
    if not self.norm_first:
        x = self.norm1(x)
    residual = x
    if self.norm_first:
        x = self.norm2(x)
    x = residual + self.dropout2(self.feed_forward(x))
    if not self.norm_first:
        x = self.norm2(x)
    return x
""",
        "Encoder.__init__": """
    if num_layers < 0:
        raise ValueError("num_layers cannot be negative")
    self.layers = nn.ModuleList()
    for _ in range(num_layers):
        self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first))
    self.norm = None
    if norm_first:
        self.norm = nn.LayerNorm(d_model)
""",
        "Encoder.forward": """
    out = x
    for block in self.layers:
        out = block(out, key_padding_mask=key_padding_mask)
    if self.norm is None:
        return out
    return self.norm(out)
""",
    },
    "sublayers": {
        "EncoderLayer.__init__": """
    self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
    self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
    self.norm1 = nn.LayerNorm(d_model)
    self.norm2 = nn.LayerNorm(d_model)
    self.dropout1 = nn.Dropout(dropout)
    self.dropout2 = nn.Dropout(dropout)
    self.norm_first = norm_first
""",
        "EncoderLayer.forward": """
    attend = lambda t: self.self_attn(t, t, t, key_padding_mask=key_padding_mask, need_weights=False)[0]
    steps = ((self.norm1, self.dropout1, attend), (self.norm2, self.dropout2, self.feed_forward))
    for norm, drop, fn in steps:
        if self.norm_first:
            x = x + drop(fn(norm(x)))
        else:
            x = norm(x + drop(fn(x)))
    return x
""",
        "Encoder.__init__": """
    if num_layers < 0:
        raise ValueError(f"num_layers={num_layers} < 0")
    self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for i in range(num_layers))
    self.norm = nn.LayerNorm(d_model) if norm_first else None
""",
        "Encoder.forward": """
    for i in range(len(self.layers)):
        x = self.layers[i](x, key_padding_mask=key_padding_mask)
    if self.norm is not None:
        x = self.norm(x)
    return x
""",
    },
    "branches": {
        "EncoderLayer.__init__": """
    self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=True)
    self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
    self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
    self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
    self.dropout1 = nn.Dropout(p=dropout)
    self.dropout2 = nn.Dropout(p=dropout)
    self.norm_first = norm_first
""",
        "EncoderLayer.forward": """
    if not self.norm_first:
        attn_out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
        y = self.norm1(x + self.dropout1(attn_out))
        return self.norm2(y + self.dropout2(self.feed_forward(y)))
    z = self.norm1(x)
    attn_out, _ = self.self_attn(z, z, z, key_padding_mask=key_padding_mask)
    y = x + self.dropout1(attn_out)
    return y + self.dropout2(self.feed_forward(self.norm2(y)))
""",
        "Encoder.__init__": """
    if not isinstance(num_layers, int) or num_layers < 0:
        raise ValueError("num_layers must be a non-negative int")
    self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                 for _ in range(num_layers)])
    self.norm = nn.LayerNorm(d_model) if norm_first else None
""",
        "Encoder.forward": """
    h = x
    for layer in self.layers:
        h = layer(h, key_padding_mask)
    return h if self.norm is None else self.norm(h)
""",
    },
}
