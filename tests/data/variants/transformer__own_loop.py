"""The Transformer with its masks built in one helper, the decoder's causal mask cached in a
non-persistent buffer sliced per call, and greedy decoding written as a for loop over steps that
keeps a list of columns."""

import torch
from torch import nn

from decoder import Decoder
from embedding import TokenEmbedding
from encoder import Encoder
from masks import make_causal_mask, make_padding_mask
from positional_encoding import PositionalEncoding


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, num_encoder_layers=6,
                 num_decoder_layers=6, d_ff=2048, dropout=0.1, max_len=5000, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.src_embed = TokenEmbedding(src_vocab_size, d_model, padding_idx=pad_id)
        self.tgt_embed = TokenEmbedding(tgt_vocab_size, d_model, padding_idx=pad_id)
        self.pos_encoding = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        self.encoder = Encoder(num_encoder_layers, d_model, num_heads, d_ff, dropout=dropout)
        self.decoder = Decoder(num_decoder_layers, d_model, num_heads, d_ff, dropout=dropout)
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        self.register_buffer("causal", make_causal_mask(max_len), persistent=False)

    def _masks(self, src, tgt=None):
        src_pad = make_padding_mask(src, self.pad_id)
        if tgt is None:
            return src_pad
        size = tgt.shape[1]
        return src_pad, make_padding_mask(tgt, self.pad_id), self.causal[:size, :size]

    def encode(self, src):
        return self.encoder(self.pos_encoding(self.src_embed(src)), key_padding_mask=self._masks(src))

    def decode(self, tgt, memory, src):
        src_pad, tgt_pad, causal = self._masks(src, tgt)
        return self.decoder(self.pos_encoding(self.tgt_embed(tgt)), memory, tgt_mask=causal,
                            tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)

    def forward(self, src, tgt):
        return self.generator(self.decode(tgt, self.encode(src), src))

    @torch.no_grad()
    def greedy_decode(self, src, bos_id, eos_id, max_len):
        if max_len < 1:
            raise ValueError(f"max_len must be at least 1, got max_len={max_len}")
        memory = self.encode(src)
        columns = [torch.full((src.shape[0],), bos_id, dtype=torch.long)]
        ended = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len - 1):
            if ended.all():
                break
            ys = torch.stack(columns, dim=1)
            token = self.generator(self.decode(ys, memory, src))[:, -1].argmax(-1)
            token = token.masked_fill(ended, self.pad_id)
            columns.append(token)
            ended = ended | token.eq(eos_id)
        return torch.stack(columns, dim=1)
