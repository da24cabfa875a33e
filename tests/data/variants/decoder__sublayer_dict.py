"""Decoder layers that loop over their three sublayers, held by the contract's names and also in
a ``ModuleDict`` of (attention, norm, dropout) triples."""

from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = (nn.Dropout(dropout) for _ in range(3))
        self.blocks = nn.ModuleDict({"self": nn.ModuleList([self.norm1, self.dropout1]),
                                     "cross": nn.ModuleList([self.norm2, self.dropout2]),
                                     "ffn": nn.ModuleList([self.norm3, self.dropout3])})
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
        steps = (("self", lambda h: self.self_attn(h, h, h, key_padding_mask=tgt_key_padding_mask,
                                                   attn_mask=tgt_mask, need_weights=False)[0]),
                 ("cross", lambda h: self.cross_attn(h, memory, memory, key_padding_mask=memory_key_padding_mask,
                                                     need_weights=False)[0]),
                 ("ffn", self.feed_forward))
        for name, sublayer in steps:
            norm, dropout = self.blocks[name]
            x = x + dropout(sublayer(norm(x))) if self.norm_first else norm(x + dropout(sublayer(x)))
        return x


class Decoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, tgt_key_padding_mask, memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x
