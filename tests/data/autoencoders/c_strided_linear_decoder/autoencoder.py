"""A correct AutoEncoder, (c) strided convolutions + a linear decoder."""

import torch
import torch.nn.functional as F
from torch import nn


class ConvAutoEncoder(nn.Module):
    """A correct AutoEncoder, (c) strided convolutions + a linear decoder."""

    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.enc = nn.Sequential(nn.Conv2d(1, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU(),
                                 nn.Flatten(), nn.Linear(32 * 7 * 7, latent_dim))
        self.dec = nn.Sequential(nn.Linear(latent_dim, 256), nn.ReLU(), nn.Linear(256, 784))

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return torch.sigmoid(self.dec(z)).reshape(z.shape[0], 1, 28, 28)

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
            images = images.to(device)
            loss = F.mse_loss(model(images), images)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
