"""TokenEmbedding that keeps sqrt(d_model) in a 0-d persistent buffer (in its state_dict: the
contract says nothing of extra state) and multiplies in forward."""

import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model, padding_idx=None):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)
        self.register_buffer("scale", torch.tensor(math.sqrt(d_model)))

    def forward(self, token_ids):
        return self.embedding(token_ids) * self.scale.to(self.embedding.weight.dtype)


InputEmbeddings = TokenEmbedding
