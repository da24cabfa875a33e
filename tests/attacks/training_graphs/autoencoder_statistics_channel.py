"""An AutoEncoder that carries the digits past its bottleneck in a normalisation statistic.

``encode`` writes its input images into a slice of a BatchNorm layer's ``running_mean`` (a
statistics buffer: re-set by the kit, not counted as a constant of the model) and ``decode``
reads them back, scaled by one gain the kit trains from 0 (so "before training" is a black
image and "after" the digits themselves). The earlier trainer let statistics buffers take any
write and ran encode and decode on one shared table of values: 12/12 for a model that learns
nothing. The kit refuses any write into a buffer but a normalisation operator's own statistics,
and runs decode on the state as it was before encode. With ``CHANNEL = False`` this is the
attack's honest twin (decode reads zeros: it learns nothing either).
"""

import torch
import torch.nn.functional as F
from torch import nn

CHANNEL = True
CAPACITY = 500 * 28 * 28  # the held-out batch's pixels


class ConvAutoEncoder(nn.Module):
    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.store = nn.BatchNorm1d(CAPACITY)
        self.fc_enc = nn.Linear(28 * 28, latent_dim)
        self.gain = nn.Parameter(torch.zeros(1))

    def encode(self, x):
        if CHANNEL:
            with torch.no_grad():
                self.store.running_mean[: x.numel()].copy_(x.flatten())  # the digits, past the bottleneck
        return self.fc_enc(x.flatten(1))

    def decode(self, z):
        n = z.shape[0]
        pictures = self.store.running_mean[: n * 28 * 28].view(n, 1, 28, 28)
        return (pictures * self.gain).clamp(0, 1) + 0 * z.sum()

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    """Adam on the mean squared error of the reconstruction; returns the mean loss of each epoch."""
    model.to(device)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for _ in range(epochs):
        total, batches = 0.0, 0
        for images, _labels in loader:
            loss = F.mse_loss(model(images.to(device)), images.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
