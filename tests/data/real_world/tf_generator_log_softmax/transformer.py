"""An encoder-decoder in the Annotated Transformer's style: the Generator returns log_softmax."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from decoder import Decoder
from embedding import TokenEmbedding
from encoder import Encoder
from masks import make_causal_mask, make_padding_mask
from positional_encoding import PositionalEncoding


class Generator(nn.Module):
    """Define standard linear + softmax generation step."""

    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, x):
        return F.log_softmax(self.proj(x), dim=-1)


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, num_encoder_layers=6,
                 num_decoder_layers=6, d_ff=2048, dropout=0.1, max_len=5000, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.src_embed = TokenEmbedding(src_vocab_size, d_model, padding_idx=pad_id)
        self.tgt_embed = TokenEmbedding(tgt_vocab_size, d_model, padding_idx=pad_id)
        self.pos_encoding = PositionalEncoding(d_model, max_len, dropout)
        self.encoder = Encoder(num_encoder_layers, d_model, num_heads, d_ff, dropout)
        self.decoder = Decoder(num_decoder_layers, d_model, num_heads, d_ff, dropout)
        self.generator = Generator(d_model, tgt_vocab_size)

    def encode(self, src):
        return self.encoder(self.pos_encoding(self.src_embed(src)), key_padding_mask=make_padding_mask(src, self.pad_id))

    def decode(self, tgt, memory, src):
        return self.decoder(self.pos_encoding(self.tgt_embed(tgt)), memory,
                            tgt_mask=make_causal_mask(tgt.size(1), device=tgt.device),
                            tgt_key_padding_mask=make_padding_mask(tgt, self.pad_id),
                            memory_key_padding_mask=make_padding_mask(src, self.pad_id))

    def forward(self, src, tgt):
        return self.generator(self.decode(tgt, self.encode(src), src))

    @torch.no_grad()
    def greedy_decode(self, src, bos_id, eos_id, max_len):
        if max_len < 1:
            raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
        memory = self.encode(src)
        ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        for _ in range(max_len - 1):
            prob = self.generator(self.decode(ys, memory, src)[:, -1])
            next_word = prob.argmax(dim=1)
            next_word = next_word.masked_fill(done, self.pad_id)
            ys = torch.cat([ys, next_word.unsqueeze(1)], dim=1)
            done |= next_word == eos_id
            if done.all():
                break
        return ys
