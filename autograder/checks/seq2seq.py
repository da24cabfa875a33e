"""Helpers for the Transformer suites (exercise 9): rigged generators and what greedy decoding
must return.

A greedy decoder's output is a function of the argmax at each step. Two ways to know it without
the reference: rig the ``generator`` layer's weights through ``state_dict`` (weight 0, a bias that
favours one token), or decode once with an end id that can never win (its bias pushed down) and
derive every shorter run from that free run with :func:`finish_at_eos`.
"""

from __future__ import annotations

import zlib

import torch

from autograder.checks import oracles

NEVER = -1.0e4


def rig_generator(model, bias: torch.Tensor | None = None, *, never: int | None = None) -> None:
    """Rewrite a (student's or reference) Transformer's ``generator`` through its state dict.

    ``bias`` given: ``generator.weight`` becomes 0 and ``generator.bias`` becomes ``bias``, so
    every step predicts ``bias.argmax()``. ``never`` given: that token's bias is lowered by 1e4,
    so it is never the argmax. A generator under another name is found by its shapes
    (:func:`generator_keys`).

    Raises:
        SubmissionError: kind ``names``, no generator can be told apart.
    """
    state = model.state_dict()
    weight_key, bias_key = generator_keys(state, None if bias is None else bias.shape[0])
    if bias is not None:
        state[weight_key] = torch.zeros_like(state[weight_key])
        state[bias_key] = bias.to(state[bias_key].dtype)
    if never is not None:
        state[bias_key] = state[bias_key].clone()
        state[bias_key][never] += NEVER
    model.load_state_dict(state)


def generator_keys(state: dict, vocab: int | None = None) -> tuple[str, str]:
    """The keys of the output layer's weight ``[V, d_model]`` and bias ``[V]`` in a Transformer's
    ``state``: ``generator.weight``/``generator.bias`` when present; otherwise the one module
    owning exactly a 2-D and a 1-D tensor of those shapes whose weight has the shape of a
    one-tensor module's (the target embedding, ``[V, d_model]``), of ``V == vocab`` when given.

    Raises:
        SubmissionError: kind ``names``, none or several such modules.
    """
    if "generator.weight" in state and "generator.bias" in state:
        return "generator.weight", "generator.bias"
    owned: dict[str, list[str]] = {}
    for key in state:
        owned.setdefault(key.rpartition(".")[0], []).append(key)
    tables = {tuple(state[keys[0]].shape) for keys in owned.values() if len(keys) == 1}
    found = []
    for keys in owned.values():
        if len(keys) == 2:
            keys = sorted(keys, key=lambda k: -state[k].dim())   # the weight first
            weight, bias = (state[k].shape for k in keys)
            if (len(weight) == 2 and tuple(weight) in tables and tuple(bias) == (weight[0],)
                    and vocab in (None, weight[0])):
                found.append(tuple(keys))
    if len(found) != 1:
        from autograder.i18n import _
        from autograder.sandbox.errors import SubmissionError

        raise SubmissionError("names", _("Transformer has no generator.weight and generator.bias, and no one "
                                         "other layer of their shapes ([tgt_vocab_size, d_model], "
                                         "[tgt_vocab_size]); use the attribute names of exercises/README.md"))
    return found[0]


def redraw_(model, seed: int) -> None:
    """Give every parameter of ``model`` (a module a test just built: the student's handle, the
    reference or a mutant) values that depend only on its name and ``seed``, by
    :func:`autograder.checks.oracles.drawn_value`, :func:`~autograder.checks.oracles.randomize_`'s rule: matrices ``N(0, 1/fan_in)``, the weights of
    1-D parameters (LayerNorm gains) ``1 + 0.2 N(0, 1)``, biases ``0.1 N(0, 1)``. Buffers are kept.

    A module with the contract's attribute names gets the same numbers whatever its registration
    order and the run's seed, so a test on it behaves the same for every seed (a draw chosen once
    for its power keeps it)."""
    state = {}
    for name, param in model.named_parameters():
        gen = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(name.encode("utf-8")))
        noise = torch.randn(tuple(param.shape), generator=gen, dtype=torch.float64)
        state[name] = oracles.drawn_value(name, noise).to(param.dtype)
    model.load_state_dict(state, strict=False)


def one_hot_bias(vocab: int, token: int, value: float = 10.0) -> torch.Tensor:
    """``Tensor[vocab]``: ``value`` at ``token``, 0 elsewhere."""
    bias = torch.zeros(vocab)
    bias[token] = value
    return bias


def finish_at_eos(free: torch.Tensor, eos_id: int, pad_id: int) -> torch.Tensor:
    """What greedy decoding with end id ``eos_id`` returns, given the run ``free`` (``Long[B, L]``)
    of the same model in which no row ever ended: each row's tokens up to its first ``eos_id``,
    ``pad_id`` after it, cut after the column where every row has ended (exercises/README.md 9)."""
    out = free.clone()
    finished = torch.zeros(free.shape[0], dtype=torch.bool)
    for t in range(1, free.shape[1]):
        out[:, t] = torch.where(finished, torch.full_like(free[:, t], pad_id), free[:, t])
        finished |= out[:, t] == eos_id
        if bool(finished.all()):
            return out[:, :t + 1]
    return out


def choose_eos(free: torch.Tensor, exclude: tuple[int, ...]) -> int:
    """The token of ``free[:, 1:]`` (not in ``exclude``) that, first, occurs in every row (so
    decoding stops before ``max_len``) and, second, first occurs on the most distinct steps across
    rows (so rows end at different times); ties go to the smallest id.
    Falls back to ``free[0, -1]`` when every generated token is excluded."""
    best, best_key = int(free[0, -1]), (False, -1, 0)
    for token in sorted(set(free[:, 1:].flatten().tolist()) - set(exclude)):
        hits = free[:, 1:] == token
        first = torch.where(hits.any(1), hits.float().argmax(1), torch.full((free.shape[0],), free.shape[1]))
        key = (bool(hits.any(1).all()), len(set(first.tolist())), -token)
        if key > best_key:
            best, best_key = token, key
    return best


def argmax_agrees(logits: torch.Tensor, chosen: torch.Tensor, margin: float = 1e-4) -> torch.Tensor:
    """``Bool[B, T]``: whether ``chosen`` is the argmax of ``logits`` (``[B, T, V]``) at each
    position, counting near-ties (top two within ``margin``) as agreeing."""
    top2 = logits.topk(2, dim=-1).values
    tie = (top2[..., 0] - top2[..., 1]) < margin
    picked = logits.gather(-1, chosen[..., None])[..., 0]
    return (logits.argmax(-1) == chosen) | (tie & (top2[..., 0] - picked < margin))
