"""A convolutional AutoEncoder of another stack (max-pooling down, nearest up-sampling and
convolutions up, a final sigmoid) with a latent ``Sequential`` and an extra buffer of its own;
``train_autoencoder`` trains on the binary cross-entropy of the sigmoid output (the contract
allows it)."""

import torch
import torch.nn.functional as F
from torch import nn


class ConvAutoEncoder(nn.Module):
    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.down = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.to_code = nn.Linear(32 * 7 * 7, latent_dim)
        self.from_code = nn.Linear(latent_dim, 32 * 7 * 7)
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(32, 16, 3, padding=1),
                                nn.ReLU(), nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(16, 1, 3, padding=1))
        self.register_buffer("image_shape", torch.tensor([1, 28, 28]))

    def encode(self, x):
        return self.to_code(self.down(x).flatten(1))

    def decode(self, z):
        h = F.relu(self.from_code(z)).view(-1, 32, 7, 7)
        return torch.sigmoid(self.up(h))

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    means = []
    for _ in range(epochs):
        losses = []
        for images, _labels in loader:
            images = images.to(device)
            loss = F.binary_cross_entropy(model(images), images)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        means.append(sum(losses) / len(losses))
    return means
