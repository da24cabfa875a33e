"""A legitimate seq2seq_training: the loss written out (log_softmax, gather, a 0/1 mask and a clamped
count instead of ignore_index), the shift with narrow, zero_grad(set_to_none=True) before the forward."""

import torch


def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    if not torch.is_tensor(logits) or logits.ndim != 3 or not torch.is_floating_point(logits):
        raise ValueError(f"logits must be a float [B, T, V] tensor, got shape {tuple(getattr(logits, 'shape', ()))}")
    if not torch.is_tensor(targets) or targets.ndim != 2 or torch.is_floating_point(targets) \
            or targets.dtype == torch.bool:
        raise ValueError(f"targets must be an integer [B, T] tensor, got {getattr(targets, 'dtype', type(targets))}")
    if tuple(targets.shape) != tuple(logits.shape[:2]):
        raise ValueError(f"targets shape {tuple(targets.shape)} != logits' first dims {tuple(logits.shape[:2])}")
    keep = (targets != pad_id).to(logits.dtype)
    log_p = torch.log_softmax(logits, dim=-1)
    nll = -log_p.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
    per_token = (1.0 - label_smoothing) * nll - label_smoothing * log_p.mean(dim=-1)
    return (per_token * keep).sum() / keep.sum().clamp(min=1.0)


def teacher_forcing(tgt):
    if not torch.is_tensor(tgt) or tgt.ndim != 2 or tgt.size(1) < 2:
        raise ValueError(f"tgt must be [B, T] with T >= 2, got {tuple(getattr(tgt, 'shape', ()))}")
    steps = tgt.size(1) - 1
    return tgt.narrow(1, 0, steps), tgt.narrow(1, 1, steps)


def train_transformer(model, batches, epochs=1, lr=1e-3, pad_id=0, device="cpu"):
    if epochs < 0 or lr <= 0:
        raise ValueError(f"epochs must be >= 0 and lr > 0, got epochs={epochs}, lr={lr}")
    model = model.to(device)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    means = []
    for _epoch in range(epochs):
        losses = []
        for src, tgt in batches:
            decoder_input, labels = teacher_forcing(tgt.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss = sequence_loss(model(src.to(device), decoder_input), labels, pad_id)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            losses.append(float(loss.detach()))
        if not losses:
            raise ValueError("batches yielded no batch")
        means.append(sum(losses) / len(losses))
    return means
