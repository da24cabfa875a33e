"""Legitimate: the feed-forward's forward written step by step with nn.ReLU and nn.Dropout modules."""
import torch.nn as nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        hidden = self.relu(self.linear1(x))
        hidden = self.dropout(hidden)
        return self.linear2(hidden)
