"""A Transformer written from a tutorial (masks True = keep, as in the Annotated Transformer)."""
import torch
import torch.nn as nn

from decoder import Decoder
from embedding import TokenEmbedding
from encoder import Encoder
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

    def pad_mask(self, ids):
        return ids != self.pad_id

    @staticmethod
    def subsequent_mask(size, device):
        return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)

    def encode(self, src):
        return self.encoder(self.pos_encoding(self.src_embed(src)), key_padding_mask=self.pad_mask(src))

    def decode(self, tgt, memory, src):
        x = self.pos_encoding(self.tgt_embed(tgt))
        return self.decoder(x, memory, tgt_mask=self.subsequent_mask(tgt.size(1), tgt.device),
                            tgt_key_padding_mask=self.pad_mask(tgt), memory_key_padding_mask=self.pad_mask(src))

    def forward(self, src, tgt):
        memory = self.encode(src)
        return self.generator(self.decode(tgt, memory, src))

    @torch.no_grad()
    def greedy_decode(self, src, bos_id, eos_id, max_len):
        if max_len < 1:
            raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
        memory = self.encode(src)
        ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        while ys.size(1) < max_len and not done.all():
            nxt = self.generator(self.decode(ys, memory, src)[:, -1]).argmax(-1)
            nxt = nxt.masked_fill(done, self.pad_id)
            ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
            done |= nxt == eos_id
        return ys
