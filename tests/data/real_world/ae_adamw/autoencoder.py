"""A course convolutional AutoEncoder; its training loop uses AdamW."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvAutoEncoder(nn.Module):
    def __init__(self, latent_dim=32):
        super().__init__()
        if latent_dim < 1:
            raise ValueError(f"latent_dim must be >= 1, got latent_dim={latent_dim}")
        self.latent_dim = latent_dim
        self.conv1 = nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc_enc = nn.Linear(32 * 7 * 7, latent_dim)
        self.fc_dec = nn.Linear(latent_dim, 32 * 7 * 7)
        self.deconv1 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
        self.deconv2 = nn.ConvTranspose2d(16, 1, 3, stride=2, padding=1, output_padding=1)

    def encode(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc_enc(torch.flatten(x, 1))

    def decode(self, z):
        x = F.relu(self.fc_dec(z)).view(-1, 32, 7, 7)
        x = F.relu(self.deconv1(x))
        return torch.sigmoid(self.deconv2(x))

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    model = model.to(device)
    model.train()
    criterion = nn.MSELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    epoch_losses = []
    for epoch in range(epochs):
        running, steps = 0.0, 0
        for data in loader:
            img, _ = data
            img = img.to(device)
            output = model(img)
            loss = criterion(output, img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
            steps += 1
        epoch_losses.append(running / steps)
    return epoch_losses
