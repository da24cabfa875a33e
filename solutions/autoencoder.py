"""Exercise 11: a convolutional AutoEncoder for MNIST (MNIST 용 합성곱 오토인코더).

English
-------
An AutoEncoder learns to copy its input through a narrow bottleneck: the *encoder* squeezes a
28x28 digit into a ``latent_dim``-wide code ``z``, the *decoder* rebuilds the image from ``z``, and
training minimises the reconstruction error. Because ``z`` is small, the network must learn what
matters about digits. Here: two stride-2 convolutions (28 -> 14 -> 7), a linear layer to ``z``; a
linear layer back, two transposed convolutions (7 -> 14 -> 28) and a sigmoid so pixels lie in
[0, 1] like MNIST's. Training uses Adam (Kingma & Ba 2015) on the mean squared error. (See
Hinton & Salakhutdinov 2006, "Reducing the Dimensionality of Data with Neural Networks", and the
PyTorch MNIST tutorials.) Only the behaviour is graded (shapes, the ``latent_dim`` bottleneck,
the reconstruction error), not the exact layer stack.

한국어
------
오토인코더는 좁은 병목을 지나 입력을 그대로 복원하도록 학습합니다. *인코더*가 28x28 숫자
이미지를 ``latent_dim`` 차원 코드 ``z`` 로 압축하고, *디코더*가 ``z`` 로부터 이미지를 다시
만들며, 복원 오차를 줄이도록 학습합니다. 여기서는 stride 2 합성곱 두 번(28 -> 14 -> 7)과 선형층,
그리고 선형층, 전치 합성곱 두 번(7 -> 14 -> 28), 시그모이드(픽셀 값 [0, 1])를 씁니다. 학습은
Adam 과 평균제곱오차(MSE)로 합니다. 정확한 층 구성이 아니라 동작(모양, 병목 크기, 복원 오차)을
채점합니다.
"""

import torch
import torch.nn.functional as F
from torch import nn


class ConvAutoEncoder(nn.Module):
    """Convolutional AutoEncoder ``[B, 1, 28, 28] -> [B, latent_dim] -> [B, 1, 28, 28]``.

    Args:
        latent_dim: width of the bottleneck code ``z`` (병목 코드 차원), ``>= 1``.

    Attributes:
        latent_dim: the bottleneck width.
        conv1, conv2: ``nn.Conv2d`` with stride 2 (1 -> 16 -> 32 channels, 28 -> 14 -> 7).
        fc_enc: ``nn.Linear(32*7*7, latent_dim)``; fc_dec: ``nn.Linear(latent_dim, 32*7*7)``.
        deconv1, deconv2: ``nn.ConvTranspose2d`` with stride 2 (32 -> 16 -> 1 channels, 7 -> 14 -> 28).

    Raises:
        ValueError: ``latent_dim < 1``.

    Training check: the grader records one call each of ``decode(encode(x))`` (training mode),
    ``encode`` and ``decode`` (eval mode) on inputs it picks, at its batch sizes, as the ATen
    operators they run; re-draws the parameters; trains the recording with its own Adam loop on the
    mean squared error; and measures ``decode`` of a slightly noisy, bfloat16-rounded ``z``. A
    Python ``if`` on tensor values is evaluated once, while recording (use ``torch.where`` to
    compute by value); the module's own constants (buffers other than BatchNorm statistics, tensors
    made outside its methods, numbers in operator arguments) may hold at most 1,024 32-bit words,
    and a recorded call may not write into the module's parameters, buffers or inputs.
    (학습 채점: 채점기는 encode/decode 한 번의 계산을 ATen 연산으로 기록하고, 매개변수를 새로 뽑아 자신의
    Adam 루프로 학습한 뒤, 약간의 잡음을 더하고 bfloat16 으로 반올림한 ``z`` 로 decode 를 잽니다.)

    Source: Hinton & Salakhutdinov 2006; the PyTorch MNIST AutoEncoder tutorials.
    """

    def __init__(self, latent_dim: int = 32):
        """Create the encoder and decoder layers (인코더와 디코더 층을 만듭니다)."""
        super().__init__()
        ### BEGIN SOLUTION
        # HINT: two Conv2d(kernel 3, stride 2, padding 1) to 7x7, a Linear to latent_dim; a Linear back and two ConvTranspose2d(kernel 3, stride 2, padding 1, output_padding 1).
        # 힌트: Conv2d(커널 3, stride 2, padding 1) 두 개로 7x7 까지 줄이고 Linear 로 latent_dim; 다시 Linear 와 ConvTranspose2d(커널 3, stride 2, padding 1, output_padding 1) 두 개.
        if latent_dim < 1:
            raise ValueError(f"latent_dim must be >= 1, got latent_dim={latent_dim}")
        self.latent_dim = latent_dim
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1)
        self.fc_enc = nn.Linear(32 * 7 * 7, latent_dim)
        self.fc_dec = nn.Linear(latent_dim, 32 * 7 * 7)
        self.deconv1 = nn.ConvTranspose2d(32, 16, kernel_size=3, stride=2, padding=1, output_padding=1)
        self.deconv2 = nn.ConvTranspose2d(16, 1, kernel_size=3, stride=2, padding=1, output_padding=1)
        ### END SOLUTION

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Images to codes (이미지를 코드로).

        Args:
            x: ``Tensor[B, 1, 28, 28]`` with values in [0, 1].

        Returns:
            ``z``: ``Tensor[B, latent_dim]``.

        Raises:
            ValueError: ``x`` is not ``[B, 1, 28, 28]``.
        """
        ### BEGIN SOLUTION
        # HINT: conv1 -> ReLU -> conv2 -> ReLU -> flatten -> fc_enc.
        # 힌트: conv1 -> ReLU -> conv2 -> ReLU -> flatten -> fc_enc 순서입니다.
        if x.dim() != 4 or tuple(x.shape[1:]) != (1, 28, 28):
            raise ValueError(f"x must have shape [B, 1, 28, 28], got x.shape={tuple(x.shape)}")
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return self.fc_enc(h.flatten(1))
        ### END SOLUTION

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Codes to images (코드를 이미지로).

        Args:
            z: ``Tensor[B, latent_dim]``.

        Returns:
            ``Tensor[B, 1, 28, 28]`` with values in [0, 1] (sigmoid output).

        Raises:
            ValueError: ``z`` is not ``[B, latent_dim]``.
        """
        ### BEGIN SOLUTION
        # HINT: fc_dec -> ReLU -> reshape to [B, 32, 7, 7] -> deconv1 -> ReLU -> deconv2 -> sigmoid.
        # 힌트: fc_dec -> ReLU -> [B, 32, 7, 7] 로 reshape -> deconv1 -> ReLU -> deconv2 -> 시그모이드.
        if z.dim() != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(
                f"z must have shape [B, latent_dim] with latent_dim={self.latent_dim}, "
                f"got z.shape={tuple(z.shape)}"
            )
        h = F.relu(self.fc_dec(z)).reshape(z.shape[0], 32, 7, 7)
        h = F.relu(self.deconv1(h))
        return torch.sigmoid(self.deconv2(h))
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Reconstruct the images: ``decode(encode(x))`` (복원 이미지).

        Args:
            x: ``Tensor[B, 1, 28, 28]``.

        Returns:
            ``Tensor[B, 1, 28, 28]`` with values in [0, 1].
        """
        ### BEGIN SOLUTION
        # HINT: decode the code of x.
        # 힌트: x 의 코드를 decode 하세요.
        return self.decode(self.encode(x))
        ### END SOLUTION


def train_autoencoder(model, loader, epochs: int = 1, lr: float = 1e-3, device="cpu") -> list[float]:
    """Train ``model`` to reconstruct the loader's images (로더의 이미지를 복원하도록 학습).

    Uses ``torch.optim.Adam(model.parameters(), lr=lr)`` and the mean squared error between the
    reconstruction and the image (``nn.MSELoss()``, ``reduction="mean"``). The model is moved to
    ``device`` and put in training mode (and left there).

    Args:
        model: a ``ConvAutoEncoder`` (any module mapping ``[B, 1, 28, 28]`` to the same shape).
        loader: an iterable of ``(images, labels)`` batches with images in [0, 1], e.g. a
            ``DataLoader`` over MNIST (labels are ignored; 레이블은 쓰지 않습니다).
        epochs: number of passes over the loader (에폭 수), ``>= 0``.
        lr: Adam's learning rate, ``> 0``.
        device: where to train (학습 장치).

    Returns:
        A list of ``epochs`` floats: the mean of each epoch's batch losses (에폭별 평균 손실).

    Raises:
        ValueError: ``epochs < 0``, ``lr <= 0``, or a loader that yields no batches.

    Source: Kingma & Ba 2015 (Adam); the PyTorch MNIST AutoEncoder tutorials.
    """
    ### BEGIN SOLUTION
    # HINT: Adam + MSELoss; for each epoch, for each batch: forward, loss against the images, zero_grad, backward, step; record the mean batch loss per epoch.
    # 힌트: Adam + MSELoss. 에폭마다 배치마다 순전파, 이미지와의 손실, zero_grad, backward, step 을 하고 에폭별 평균 배치 손실을 기록하세요.
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got epochs={epochs}")
    if lr <= 0:
        raise ValueError(f"lr must be > 0, got lr={lr}")
    model.to(device)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    history = []
    for _ in range(epochs):
        total, batches = 0.0, 0
        for batch in loader:
            images = batch[0] if isinstance(batch, (tuple, list)) else batch
            images = images.to(device)
            loss = loss_fn(model(images), images)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        if batches == 0:
            raise ValueError("loader must yield at least one batch, got an empty loader")
        history.append(total / batches)
    return history
    ### END SOLUTION
