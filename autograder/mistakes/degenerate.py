"""Degenerate implementations: code that has the contract's shape but does nothing useful.

A constant output, zeros of the right shape, the identity, a model that ignores its context (the
keys, the earlier tokens, the source), uniform attention, a positional encoding that adds nothing,
an AutoEncoder whose ``decode`` returns a constant grey image and whose loop trains nothing. Such code satisfies many property
tests vacuously (a model that ignores earlier tokens is causal), so ``tkit validate`` grades each
one as a submission, beside the catalog's mutants, and fails when one earns more than
:data:`MAX_SHARE` of its exercise (:func:`autograder.validate.check_degenerate`).

Each :class:`Degenerate` is the reference ``solutions/<target>.py`` with a postscript appended that
rebinds some of its functions or methods (the rest of the module, argument checks included, stays
the reference's), so an entry keeps applying when the reference's text changes. Like the catalog,
this is instructor-only material: it needs ``solutions/``.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder import paths

#: The most a degenerate implementation may earn of its exercise's points (of the points that ran:
#: without the training tests, of the non-training points).
MAX_SHARE = 0.20


@dataclass(frozen=True)
class Degenerate:
    """One degenerate implementation of ``exercise``: ``solutions/<target>.py`` followed by
    ``postscript`` (Python that rebinds names of that module; ``module`` defaults to ``exercise``)."""

    id: str
    exercise: str
    what: str
    postscript: str
    module: str | None = None

    @property
    def target(self) -> str:
        return self.module or self.exercise

    def source(self) -> str:
        """The reference module with the postscript appended."""
        folder = paths.solutions_dir()
        if folder is None:
            raise FileNotFoundError("degenerate implementations need the reference solutions (solutions/)")
        text = (folder / f"{self.target}.py").read_text(encoding="utf-8")
        return f"{text.rstrip()}\n\n\n# --- tkit validate: degenerate implementation {self.id} ---\n{self.postscript.strip()}\n"


_ZEROS_LIKE_X = "return torch.zeros_like(x)"
_NEVER_STEPS = """
def train_transformer(model, batches, epochs=1, lr=1e-3, pad_id=0, device="cpu"):
    model.to(device)
    model.train()
    return [2.0 for _ in range(epochs)]
"""

DEGENERATES: tuple[Degenerate, ...] = (
    Degenerate("embedding_zeros", "embedding", "zeros of the right shape", """
def _forward(self, token_ids):
    return torch.zeros(*token_ids.shape, self.d_model)
TokenEmbedding.forward = _forward
"""),
    Degenerate("pe_adds_nothing", "positional_encoding", "a table of zeros: forward returns x", """
def sinusoidal_table(max_len, d_model):
    if d_model < 2 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
    return torch.zeros(max_len, d_model)
"""),
    Degenerate("masks_block_nothing", "masks", "masks that block nothing, softmax without a mask", """
def make_padding_mask(token_ids, pad_id=0):
    return torch.zeros(token_ids.shape, dtype=torch.bool, device=token_ids.device)
def make_causal_mask(size, device=None):
    return torch.zeros(size, size, dtype=torch.bool, device=device)
def masked_softmax(scores, mask, dim=-1):
    return torch.softmax(scores, dim=dim)
"""),
    Degenerate("attention_uniform", "attention", "uniform weights over every key (scores and mask ignored)", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.full((*query.shape[:-1], key.shape[-2]), 1.0 / key.shape[-2], dtype=query.dtype)
    return torch.matmul(weights, value), weights
"""),
    Degenerate("attention_returns_query", "attention", "the identity: the query comes back, weights one-hot", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.zeros(*query.shape[:-1], key.shape[-2], dtype=query.dtype)
    weights[..., 0] = 1.0
    return query.clone(), weights
"""),
    Degenerate("mha_uniform", "multi_head_attention", "uniform weights over every key, per head", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.full((*query.shape[:-1], key.shape[-2]), 1.0 / key.shape[-2], dtype=query.dtype)
    return torch.matmul(weights, value), weights
"""),
    Degenerate("mha_ignores_keys", "multi_head_attention", "each query attends to itself only (keys ignored)", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    s_q, s_k = query.shape[-2], key.shape[-2]
    weights = torch.zeros(*query.shape[:-1], s_k, dtype=query.dtype)
    idx = torch.arange(s_q) % s_k
    weights[..., torch.arange(s_q), idx] = 1.0
    return torch.matmul(weights, value), weights
"""),
    Degenerate("feed_forward_identity", "feed_forward", "the identity", """
def _forward(self, x):
    return x.clone()
PositionwiseFeedForward.forward = _forward
"""),
    Degenerate("feed_forward_zeros", "feed_forward", "zeros of the right shape", f"""
def _forward(self, x):
    {_ZEROS_LIKE_X}
PositionwiseFeedForward.forward = _forward
"""),
    Degenerate("encoder_identity", "encoder", "layers that return their input", """
def _forward(self, x, key_padding_mask=None):
    return x.clone()
EncoderLayer.forward = _forward
"""),
    Degenerate("encoder_feed_forward_only", "encoder", "no self-attention: each position alone (the context ignored)", """
def _forward(self, x, key_padding_mask=None):
    if self.norm_first:
        return x + self.dropout2(self.feed_forward(self.norm2(x)))
    return self.norm2(x + self.dropout2(self.feed_forward(x)))
EncoderLayer.forward = _forward
"""),
    Degenerate("decoder_identity", "decoder", "layers that return their input", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return x.clone()
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_ignores_memory", "decoder", "no cross-attention: the source ignored", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return _reference_forward(self, x, torch.zeros_like(memory), tgt_mask, tgt_key_padding_mask, None)
_reference_forward = DecoderLayer.forward
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_ignores_context", "decoder", "no attention: memory and earlier tokens ignored", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    if self.norm_first:
        return x + self.dropout3(self.feed_forward(self.norm3(x)))
    return self.norm3(x + self.dropout3(self.feed_forward(x)))
DecoderLayer.forward = _forward
"""),
    Degenerate("transformer_ignores_source", "transformer", "a language model of the target: the memory is zeros", """
def _encode(self, src):
    return torch.zeros_like(self.src_embed(src))
Transformer.encode = _encode
"""),
    Degenerate("transformer_current_token_only", "transformer",
               "logits from the current target token alone (source and earlier tokens ignored)", """
def _encode(self, src):
    return self.src_embed(src)
def _decode(self, tgt, memory, src):
    return self.tgt_embed(tgt)
Transformer.encode = _encode
Transformer.decode = _decode
"""),
    Degenerate("rope_identity", "rope", "the identity: every angle 0, nothing rotated", """
def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    return torch.ones(max_len, head_dim // 2), torch.zeros(max_len, head_dim // 2)
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    return x.clone()
"""),
    Degenerate("rope_apply_identity", "rope", "apply_rope returns x unrotated; rope_angles is right", """
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    return x.clone()
"""),
    Degenerate("pe_one_frequency", "positional_encoding", "every column pair at the first frequency", """
_reference_table = sinusoidal_table
def sinusoidal_table(max_len, d_model):
    return _reference_table(max_len, d_model)[:, :2].repeat(1, d_model // 2)
"""),
    Degenerate("rope_one_frequency", "rope", "every pair turned at one frequency (angle = position)", """
_reference_angles = rope_angles
def rope_angles(head_dim, max_len, base=10000.0):
    cos, sin = _reference_angles(head_dim, max_len, base)
    return cos[:, :1].expand_as(cos).clone(), sin[:, :1].expand_as(sin).clone()
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    pos = (torch.arange(x.shape[-2]) if positions is None else positions).double()[:, None]
    cos, sin = pos.cos().to(x.dtype), pos.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
"""),
    Degenerate("rope_positions_below_64", "rope", "right for positions below 64, position 63 beyond", """
_reference_angles, _reference_apply = rope_angles, apply_rope
def rope_angles(head_dim, max_len, base=10000.0):
    cos, sin = _reference_angles(head_dim, max_len, base)
    rows = torch.arange(max_len).clamp(max=63)
    return cos[rows], sin[rows]
def apply_rope(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return _reference_apply(x, pos.clamp(max=63), base)
"""),
    Degenerate("attention_uniform_visible", "attention", "uniform weights over the visible keys (scores never used)", """
_reference_softmax = masked_softmax
def masked_softmax(scores, mask, dim=-1):
    return _reference_softmax(torch.zeros_like(scores), mask, dim)
"""),
    Degenerate("mha_mean_key_query", "multi_head_attention", "the mean key as every query", """
_reference_forward = MultiHeadAttention.forward
def _forward(self, query, key, value, *args, **kwargs):
    return _reference_forward(self, key.mean(dim=1, keepdim=True).expand(query.shape), key, value, *args, **kwargs)
MultiHeadAttention.forward = _forward
"""),
    Degenerate("encoder_two_layernorms", "encoder", "a layer that is only its two LayerNorms", """
def _forward(self, x, key_padding_mask=None):
    return self.norm2(self.norm1(x))
EncoderLayer.forward = _forward
"""),
    Degenerate("encoder_self_only", "encoder", "each position attends to itself only", """
def _forward(self, x, key_padding_mask=None):
    own = lambda h: self.self_attn.out_proj(self.self_attn.v_proj(h))
    if self.norm_first:
        x = x + self.dropout1(own(self.norm1(x)))
        return x + self.dropout2(self.feed_forward(self.norm2(x)))
    x = self.norm1(x + self.dropout1(own(x)))
    return self.norm2(x + self.dropout2(self.feed_forward(x)))
EncoderLayer.forward = _forward
"""),
    Degenerate("decoder_cross_reads_itself", "decoder", "cross-attention reads the decoder's own states", """
_reference_forward = DecoderLayer.forward
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return _reference_forward(self, x, x, tgt_mask, tgt_key_padding_mask, tgt_key_padding_mask)
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_cross_reads_mean_memory", "decoder", "cross-attention reads the mean of memory", """
_reference_forward = DecoderLayer.forward
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    mean = memory.mean(dim=1, keepdim=True).expand_as(memory)
    return _reference_forward(self, x, mean, tgt_mask, tgt_key_padding_mask, None)
DecoderLayer.forward = _forward
"""),
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
    # a loop that never steps: moved and left in training mode as the contract asks, nothing learned
    Degenerate("seq2seq_constant", "seq2seq_training",
               "a constant loss, teacher_forcing returning (tgt, tgt) and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return logits.sum() * 0.0 + 2.5
def teacher_forcing(tgt):
    return tgt, tgt
{_NEVER_STEPS}"""),
    Degenerate("seq2seq_ignores_targets", "seq2seq_training",
               "a loss that ignores the targets (the mean log-sum-exp) and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return torch.logsumexp(logits, dim=-1).mean()
{_NEVER_STEPS}"""),
    Degenerate("seq2seq_zero_loss_never_steps", "seq2seq_training", "a loss of zeros and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return logits.sum() * 0.0
{_NEVER_STEPS}"""),
)


def all_degenerates() -> tuple[Degenerate, ...]:
    """Every degenerate implementation: this registry's, then the generated ones
    (:func:`autograder.mistakes.adversaries.generate`); empty without ``solutions/``."""
    from autograder.mistakes import adversaries

    if paths.solutions_dir() is None:
        return ()
    return DEGENERATES + tuple(Degenerate(*entry) for entry in adversaries.generate())


def by_id(degenerate_id: str) -> Degenerate:
    for d in all_degenerates():
        if d.id == degenerate_id:
            return d
    raise KeyError(f"no degenerate implementation {degenerate_id!r}")


def for_exercises(names) -> list[Degenerate]:
    wanted = set(names)
    return [d for d in all_degenerates() if d.exercise in wanted]
