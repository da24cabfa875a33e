"""An AutoEncoder whose decoder is a table of weights prepared offline, written as 600 Python
numbers (one ``torch.full`` each) rather than as a tensor: the earlier kit counted tensors made
outside the model's methods against its constants cap, but not the numbers in operator
arguments (5,000 ``full(..., scalar)`` nodes counted 0). The kit now counts every literal: 600
values with their sizes and flags are over the AutoEncoder's cap of 1,024 (a recording of 5,000
is over the wire's item limit before that). Random numbers stand for the weights; one gain, which the kit trains from 0, switches
the decoder on. With ``SCALARS = 0`` it is its own honest twin (a decoder of one number).
"""

import torch
import torch.nn.functional as F
from torch import nn

SCALARS = 600
_WEIGHTS = torch.randn(SCALARS, generator=torch.Generator().manual_seed(0)).mul(0.05).tolist()


class ConvAutoEncoder(nn.Module):
    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.fc_enc = nn.Linear(28 * 28, latent_dim)
        self.gain = nn.Parameter(torch.zeros(1))

    def encode(self, x):
        return self.fc_enc(x.flatten(1))

    def decode(self, z):
        table = torch.cat([torch.full((1,), w) for w in _WEIGHTS] or [torch.zeros(1)])
        basis = F.pad(table, (0, max(0, self.latent_dim * 784 - table.numel())))[: self.latent_dim * 784]
        return torch.sigmoid(z @ basis.view(self.latent_dim, 784) * self.gain).view(-1, 1, 28, 28)

    def forward(self, x):
        return self.decode(self.encode(x))
