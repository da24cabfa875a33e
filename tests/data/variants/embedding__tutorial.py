"""TokenEmbedding as tutorials write it (``InputEmbeddings``): an nn.Embedding times sqrt(d_model),
no argument checks of its own (nn.Embedding raises what it raises), ids cast with ``.long()`` (so
float ids are looked up, not refused)."""

import math

import torch
from torch import nn


class InputEmbeddings(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None):
        super().__init__()
        self.d_model = d_model
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)

    def forward(self, x):
        return self.embedding(x.long()) * math.sqrt(self.d_model)


TokenEmbedding = InputEmbeddings
