"""Exercise 12: training the Transformer with teacher forcing (alice)."""

import torch
import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    """Mean cross-entropy over the non-PAD target positions; 0 for an all-PAD batch."""
    if not isinstance(logits, torch.Tensor) or logits.ndim != 3 or not torch.is_floating_point(logits):
        raise ValueError("logits must be a float tensor [B, T, V]")
    if not isinstance(targets, torch.Tensor) or targets.ndim != 2 or torch.is_floating_point(targets) \
            or targets.dtype == torch.bool:
        raise ValueError("targets must be an integer tensor [B, T]")
    if tuple(targets.shape) != tuple(logits.shape[:2]):
        raise ValueError(f"targets {tuple(targets.shape)} and logits {tuple(logits.shape)} disagree on [B, T]")
    keep = targets != pad_id
    # per-position losses, then the mean over the kept positions only
    per_token = F.cross_entropy(logits.permute(0, 2, 1), targets.long(), reduction="none",
                                label_smoothing=label_smoothing)
    count = keep.sum()
    if count == 0:
        return (per_token * 0).sum()
    return (per_token * keep).sum() / count


def teacher_forcing(tgt):
    """(decoder input, labels): everything but the last token, everything but the first."""
    if not isinstance(tgt, torch.Tensor) or tgt.ndim != 2 or tgt.size(1) < 2:
        raise ValueError("tgt must be [B, T] with T >= 2")
    return tgt[:, :-1], tgt[:, 1:]


def train_transformer(model, batches, epochs=1, lr=1e-3, pad_id=0, device="cpu"):
    """Adam with teacher forcing, the loss without PAD and gradient clipping at 1.0."""
    if epochs < 0 or lr <= 0:
        raise ValueError(f"need epochs >= 0 and lr > 0, got epochs={epochs}, lr={lr}")
    model = model.to(device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    means = []
    for _epoch in range(epochs):
        losses = []
        for src, tgt in batches:
            dec_in, labels = teacher_forcing(tgt.to(device))
            loss = sequence_loss(model(src.to(device), dec_in), labels, pad_id)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            losses.append(loss.item())
        if not losses:
            raise ValueError("no batches")
        means.append(sum(losses) / len(losses))
    return means
