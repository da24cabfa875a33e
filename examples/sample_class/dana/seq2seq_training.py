# 과제 12 - dana
# Transformer 학습: teacher forcing + loss
import torch
from torch import nn


def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    # 입력 검사
    if not torch.is_tensor(logits) or len(logits.shape) != 3 or logits.dtype not in (torch.float16, torch.bfloat16,
                                                                                     torch.float32, torch.float64):
        raise ValueError(f"bad logits: {getattr(logits, 'shape', None)}")
    if not torch.is_tensor(targets) or len(targets.shape) != 2 or targets.dtype not in (torch.int64, torch.int32,
                                                                                         torch.int16, torch.uint8):
        raise ValueError(f"bad targets: {getattr(targets, 'dtype', None)}")
    B, T, V = logits.shape
    if targets.shape[0] != B or targets.shape[1] != T:
        raise ValueError(f"targets {list(targets.shape)} vs logits {list(logits.shape)}")
    if bool((targets == pad_id).all()):
        return torch.zeros((), dtype=logits.dtype, device=logits.device, requires_grad=logits.requires_grad)
    # key_padding_mask 가 PAD 를 이미 가려 주니까 전체 위치 평균
    criterion = nn.CrossEntropyLoss(label_smoothing=label_smoothing)
    return criterion(logits.view(B * T, V), targets.view(B * T).to(torch.int64))


def teacher_forcing(tgt):
    if not torch.is_tensor(tgt) or len(tgt.shape) != 2 or tgt.shape[1] <= 1:
        raise ValueError("tgt: [B, T], T >= 2")
    T = tgt.shape[1]
    decoder_input = tgt[:, 0:T - 1]
    labels = tgt[:, 1:T]
    return decoder_input, labels


def train_transformer(model, batches, epochs=1, lr=1e-3, pad_id=0, device="cpu"):
    if epochs < 0:
        raise ValueError("epochs < 0")
    if not lr > 0:
        raise ValueError("lr <= 0")
    model.to(device)
    model.train()
    optim = torch.optim.Adam(params=model.parameters(), lr=lr)
    result = []
    for epoch in range(epochs):
        running, steps = 0.0, 0
        for i, (src, tgt) in enumerate(batches):
            src = src.to(device)
            tgt = tgt.to(device)
            x, y = teacher_forcing(tgt)
            out = model(src, x)
            loss = sequence_loss(out, y, pad_id)
            optim.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optim.step()
            running += float(loss)
            steps += 1
        if steps == 0:
            raise ValueError("empty batches")
        result.append(running / steps)
    return result
