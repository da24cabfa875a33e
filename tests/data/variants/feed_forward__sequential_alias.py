"""The feed-forward block with linear1 and linear2 as the contract names them, also held in a
``net`` Sequential that forward runs (the same modules under a second name)."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.dropout, self.linear2)

    def forward(self, x):
        return self.net(x)
