"""A convolutional AutoEncoder (a fixed 64-wide bottleneck)."""
import torch
import torch.nn as nn


class ConvAutoEncoder(nn.Module):
    def __init__(self, latent_dim=32):
        super().__init__()
        if latent_dim < 1:
            raise ValueError(f"latent_dim must be >= 1, got latent_dim={latent_dim}")
        self.latent_dim = latent_dim
        width = 64
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(32 * 7 * 7, width))
        self.decoder_fc = nn.Linear(width, 32 * 7 * 7)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid())

    def encode(self, x):
        return self.encoder(x)

    def decode(self, z):
        h = torch.relu(self.decoder_fc(z)).view(-1, 32, 7, 7)
        return self.decoder(h)

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    history = []
    for _ in range(epochs):
        total, n = 0.0, 0
        for images, _labels in loader:
            images = images.to(device)
            opt.zero_grad()
            loss = loss_fn(model(images), images)
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        history.append(total / max(n, 1))
    return history
