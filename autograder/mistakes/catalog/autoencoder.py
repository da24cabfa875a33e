"""Known mistakes of exercise 11, ``autoencoder.py`` (see :mod:`autograder.mistakes.catalog`).

The training-loop mistakes (no ``step``, no ``zero_grad``, a summed epoch loss) are caught and
named by ``test_train_autoencoder_follows_adam``, which compares the loop with the kit's own
(:func:`autograder.checks.training_loop.loop_verdict`); a skip path around the bottleneck by
``test_forward_is_decode_of_encode``.
"""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_SIGMOID = "return torch.sigmoid(self.deconv2(h))"
_FORWARD = "return self.decode(self.encode(x))"

MUTANTS = [
    Mutant(
        id="autoencoder_no_sigmoid",
        exercise="autoencoder",
        hint_en="decode has no final sigmoid, so its outputs are not pixels in [0, 1]",
        hint_ko="decode 마지막에 시그모이드가 없어 출력이 [0, 1] 범위의 픽셀 값이 아닙니다",
        replace=((_SIGMOID, "return self.deconv2(h)"),),
    ),
    Mutant(
        id="autoencoder_wide_latent",
        exercise="autoencoder",
        hint_en="encode skips the last linear layer, so z is 32*7*7 wide instead of latent_dim: no real bottleneck",
        hint_ko="encode 가 마지막 선형층을 건너뛰어 z 의 크기가 latent_dim 이 아니라 32*7*7 입니다 (병목이 없음)",
        replace=(("return self.fc_enc(h.flatten(1))", "return h.flatten(1)"),
                 ("if z.dim() != 2 or z.shape[1] != self.latent_dim:", "if z.dim() != 2:"),
                 ("h = F.relu(self.fc_dec(z)).reshape(z.shape[0], 32, 7, 7)",
                  "h = z.reshape(z.shape[0], 32, 7, 7)")),
    ),
    Mutant(
        id="autoencoder_skip_path",
        exercise="autoencoder",
        hint_en="forward adds the input image to the reconstruction (a skip path around the bottleneck); "
                "decode(encode(x)) alone must rebuild the image",
        hint_ko="forward 가 복원 이미지에 입력 이미지를 더합니다 (병목을 건너뛰는 경로). decode(encode(x)) 만으로 "
                "이미지를 복원해야 합니다",
        replace=((_FORWARD, "return (self.decode(self.encode(x)) + x).clamp(0, 1)"),),
    ),
    Mutant(
        id="autoencoder_no_optimizer_step",
        exercise="autoencoder",
        hint_en="train_autoencoder never calls optimizer.step(), so the weights never change",
        hint_ko="train_autoencoder 가 optimizer.step() 을 호출하지 않아 가중치가 바뀌지 않습니다",
        replace=(("            optimizer.step()\n", ""),),
    ),
    Mutant(
        id="autoencoder_no_zero_grad",
        exercise="autoencoder",
        hint_en="train_autoencoder never calls optimizer.zero_grad(), so every step adds the gradients of all "
                "earlier batches",
        hint_ko="train_autoencoder 가 optimizer.zero_grad() 를 호출하지 않아 매 단계에 이전 배치들의 기울기가 모두 "
                "더해집니다",
        replace=(("            optimizer.zero_grad()\n", ""),),
    ),
    Mutant(
        id="autoencoder_summed_epoch_loss",
        exercise="autoencoder",
        hint_en="train_autoencoder records the sum of an epoch's batch losses, not their mean",
        hint_ko="train_autoencoder 가 에폭의 배치 손실 평균이 아니라 합을 기록합니다",
        replace=(("history.append(total / batches)", "history.append(total)"),),
    ),
    Mutant(
        id="autoencoder_identity",
        exercise="autoencoder",
        hint_en="the model returns its input unchanged instead of reconstructing it from z",
        hint_ko="모델이 z 로부터 복원하지 않고 입력을 그대로 돌려줍니다",
        replace=((_FORWARD, "return x + 0.0 * self.decode(self.encode(x))"),),
    ),
]

# Classes of mistakes: the output range (a convention) and the bottleneck width.
MUTANTS += [
    Mutant(
        id="autoencoder_tanh_output",
        exercise="autoencoder",
        convention=True,
        hint_en="decode ends with tanh, so its outputs lie in [-1, 1] (a real convention for images scaled to "
                "[-1, 1], as in DCGAN); this exercise's images are in [0, 1]: end with a sigmoid",
        hint_ko="decode 가 tanh 로 끝나 출력이 [-1, 1] 에 있습니다 (DCGAN 처럼 이미지를 [-1, 1] 로 맞출 때의 실제 "
                "방식). 이 과제의 이미지는 [0, 1] 이므로 시그모이드로 끝내세요",
        replace=((_SIGMOID, "return torch.tanh(self.deconv2(h))"),),
    ),
    Mutant(
        id="autoencoder_fixed_latent",
        exercise="autoencoder",
        hint_en="the bottleneck has a fixed width (32) whatever latent_dim is: build fc_enc with latent_dim "
                "outputs and fc_dec with latent_dim inputs",
        hint_ko="latent_dim 과 상관없이 병목의 폭이 32 로 고정되어 있습니다. fc_enc 의 출력과 fc_dec 의 입력을 "
                "latent_dim 으로 만드세요",
        replace=(("self.fc_enc = nn.Linear(32 * 7 * 7, latent_dim)", "self.fc_enc = nn.Linear(32 * 7 * 7, 32)"),
                 ("self.fc_dec = nn.Linear(latent_dim, 32 * 7 * 7)", "self.fc_dec = nn.Linear(32, 32 * 7 * 7)"),
                 ("if z.dim() != 2 or z.shape[1] != self.latent_dim:", "if z.dim() != 2 or z.shape[1] != 32:")),
    ),
]

# The loop's optimizer and loss (autograder.mistakes.families.LOOP): each named by
# test_train_autoencoder_follows_adam, which searches the settings (autograder.checks.training_loop).
_OPTIMIZER = "optimizer = torch.optim.Adam(model.parameters(), lr=lr)"
_LOOP_PATCHES = {
    "autoencoder_adam_weight_decay": ((_OPTIMIZER, "optimizer = torch.optim.Adam(model.parameters(), lr=lr, "
                                                   "weight_decay=1e-4)"),),
    "autoencoder_adamw": ((_OPTIMIZER, "optimizer = torch.optim.AdamW(model.parameters(), lr=lr)"),),
    "autoencoder_lr_ignored": ((_OPTIMIZER, "optimizer = torch.optim.Adam(model.parameters())"),),
    "autoencoder_sgd": ((_OPTIMIZER, "optimizer = torch.optim.SGD(model.parameters(), lr=lr)"),),
    "autoencoder_summed_pixel_loss": (("loss_fn = nn.MSELoss()", 'loss_fn = nn.MSELoss(reduction="sum")'),),
    "autoencoder_last_batch_loss": (("history.append(total / batches)", "history.append(loss.item())"),),
}
MUTANTS += catalog.generated("loop", families.LOOP, lambda v: _LOOP_PATCHES[v.id])


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("ConvAutoEncoder.encode", "ConvAutoEncoder.decode")
NO_TEMPLATES = ("scaled",)   # a scaled codec still learns: not degenerate

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("autoencoder_learnable_mean_digit", "autoencoder", "a learnable image plus 0.03 times a code-driven wiggle", """
_reference_init = ConvAutoEncoder.__init__
def _init(self, latent_dim=32):
    _reference_init(self, latent_dim)
    self.tkit_image = nn.Parameter(torch.zeros(1, 1, 28, 28))
def _decode(self, z):
    wiggle = torch.tanh(self.fc_dec(z)[:, :784]).reshape(-1, 1, 28, 28)
    return (torch.sigmoid(self.tkit_image) + 0.03 * wiggle).clamp(0, 1)
ConvAutoEncoder.__init__ = _init
ConvAutoEncoder.decode = _decode
"""),
    Degenerate("autoencoder_pool_upsample", "autoencoder", "average-pooled codes, bilinear up-sampling, nothing learned", """
def _side(self):
    return max(1, int(self.latent_dim ** 0.5))
def _encode(self, x):
    pooled = F.adaptive_avg_pool2d(x, _side(self)).flatten(1)
    return F.pad(pooled, (0, self.latent_dim - pooled.shape[1])) + 0 * self.fc_enc.bias.sum()
def _decode(self, z):
    side = _side(self)
    small = z[:, :side * side].reshape(-1, 1, side, side)
    return F.interpolate(small, size=(28, 28), mode="bilinear", align_corners=False).clamp(0, 1) + 0 * self.fc_dec.bias.sum()
ConvAutoEncoder.encode = _encode
ConvAutoEncoder.decode = _decode
"""),
    # the exercise is the model and its training loop: a submission that does nothing useful has
    # neither (a right loop alone earns its own share, 20 %: see test_autoencoder.py)
    Degenerate("autoencoder_constant_decode", "autoencoder",
               "decode returns a constant grey image and train_autoencoder trains nothing", """
def _decode(self, z):
    if z.dim() != 2 or z.shape[1] != self.latent_dim:
        raise ValueError(f"z must have shape [B, latent_dim] with latent_dim={self.latent_dim}, got z.shape={tuple(z.shape)}")
    return torch.full((z.shape[0], 1, 28, 28), 0.5, dtype=z.dtype, device=z.device) + 0.0 * z.sum()
ConvAutoEncoder.decode = _decode


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    model.to(device)
    model.train()
    return [0.1 / (epoch + 1) for epoch in range(epochs)]
"""),
)
