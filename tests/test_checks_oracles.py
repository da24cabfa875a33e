"""PyTorch's own modules as oracles (:mod:`autograder.checks.oracles`): a memoised case is the
oracle drawn and run directly, and a run with key-padding masks gives PyTorch's own numbers
without importing sympy."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder import memo


@pytest.mark.parametrize("kind,num_layers,norm_first", [("encoder", None, False), ("decoder", None, True),
                                                        ("encoder", 2, True), ("decoder", 2, False)])
def test_an_oracle_case_is_the_oracle_drawn_and_run_directly(fresh_memo, kind, num_layers, norm_first):
    from autograder.checks import oracles, weights

    def direct(rng):
        module = (oracles.torch_layer(kind, 8, 2, 12, norm_first=norm_first, rng=rng) if num_layers is None
                  else oracles.torch_stack(kind, num_layers, 8, 2, 12, norm_first=norm_first, rng=rng))
        return module, torch.randn(2, 3, 8, generator=rng)

    args = (torch.randn(2, 3, 8),) + ((torch.randn(2, 4, 8),) if kind == "decoder" else ())
    module, after = direct(torch.Generator().manual_seed(5))
    expected = oracles.run(module, *args)
    for _ in range(2):  # a miss, then a hit
        rng = torch.Generator().manual_seed(5)
        oracle = oracles.case(kind, 8, 2, 12, args, norm_first=norm_first, rng=rng, num_layers=num_layers)
        assert torch.equal(oracle.expected, expected)
        assert torch.equal(torch.randn(2, 3, 8, generator=rng), after)   # the draws left where they were
        assert weights.kit_state(module).keys() == oracle.state.keys()
        assert all(torch.equal(weights.kit_state(module)[k], v) for k, v in oracle.state.items())
        assert torch.equal(oracles.run(oracle.module(), *args), expected)  # rebuilt for a variant
    assert memo.stats()["hits"] >= 1


def _oracle_modules():
    from autograder.checks import inputs, oracles

    rng = torch.Generator().manual_seed(11)
    x, memory = torch.randn(3, 5, 8, generator=rng), torch.randn(3, 4, 8, generator=rng)
    x_pad = inputs.padding_mask(torch.tensor([5, 2, 4]), 5)
    memory_pad = inputs.padding_mask(torch.tensor([1, 4, 3]), 4)
    causal = inputs.causal_mask(5)
    additive = torch.randn(5, 4, generator=rng).masked_fill(torch.rand(5, 4, generator=rng) < 0.3, float("-inf"))
    mha = oracles.torch_mha({f"{n}_proj.{p}": torch.randn(8, 8, generator=rng) if p == "weight" else
                             torch.randn(8, generator=rng) for n in ("q", "k", "v", "out") for p in ("weight", "bias")},
                            8, 2)
    layer = {k: oracles.torch_layer(k, 8, 2, 12, norm_first=False, rng=rng) for k in ("encoder", "decoder")}
    stack = {k: oracles.torch_stack(k, 2, 8, 2, 12, norm_first=True, rng=rng) for k in ("encoder", "decoder")}
    return [
        (mha, (x, x, x), dict(key_padding_mask=x_pad)),
        (mha, (x, x, x), dict(key_padding_mask=x_pad, attn_mask=causal, average_attn_weights=False)),
        (mha, (x, memory, memory), dict(key_padding_mask=memory_pad, attn_mask=additive)),
        (mha, (x, memory, memory), dict(key_padding_mask=torch.zeros(3, 4).masked_fill(memory_pad, float("-inf")))),
        (layer["encoder"], (x,), dict(src_key_padding_mask=x_pad)),
        (stack["encoder"], (x,), dict(src_key_padding_mask=x_pad)),
        (stack["encoder"], (x,), dict(mask=causal, src_key_padding_mask=x_pad)),
        (layer["decoder"], (x, memory), dict(tgt_mask=causal, tgt_key_padding_mask=x_pad,
                                             memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x, memory), dict(tgt_mask=causal, tgt_key_padding_mask=x_pad,
                                             memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x, memory), dict(memory_mask=additive, memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x.double(), memory.double()), dict(tgt_key_padding_mask=x_pad)),
    ]


def test_an_oracle_run_with_key_padding_masks_gives_pytorchs_own_numbers_bit_for_bit():
    """run() merges key-padding masks into the attention masks (to skip PyTorch's sympy-importing
    shape check): the outputs, NaN rows included, are those of the module called as given."""
    from autograder.checks import oracles

    for module, args, kwargs in _oracle_modules():
        module = module.to(args[0].dtype)
        with torch.enable_grad():
            out = module(*args, **kwargs)
        direct = tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach()
        torch.testing.assert_close(oracles.run(module, *args, **kwargs), direct, rtol=0, atol=0, equal_nan=True,
                                   msg=lambda m: f"{type(module).__name__} {list(kwargs)}: {m}")
        module.float()


def test_merged_mask_is_the_sum_pytorch_forms_and_refuses_a_mask_of_the_wrong_rank():
    from autograder.checks import oracles

    pad = torch.tensor([[False, False, True]])
    attn = torch.tensor([[0.0, -1.0, 0.0], [0.0, 0.0, float("-inf")]])
    merged = oracles.merged_mask(attn, pad, 2, 2, torch.float32)
    inf = float("-inf")
    assert merged.shape == (2, 2, 3)
    assert torch.equal(merged[0], torch.tensor([[0.0, -1.0, inf], [0.0, 0.0, inf]]))
    assert torch.equal(merged[1], merged[0])
    with pytest.raises(ValueError, match=r"key_padding_mask must be \(B, S\)"):
        oracles.merged_mask(None, pad[0], 2, 2, torch.float32)


@pytest.mark.slow
def test_oracle_runs_with_key_padding_masks_never_import_sympy():
    """PyTorch's check of a key-padding mask imports sympy (about 0.4 s) on its first call; the
    oracles never make it, so no grading process pays that import."""
    import subprocess
    import sys

    code = ("import sys\n"
            "sys.path.insert(0, 'tests')\n"
            "from autograder.checks import oracles\n"
            "for module, args, kwargs in __import__('tests.test_checks_oracles', fromlist=['x'])._oracle_modules():\n"
            "    oracles.run(module.to(args[0].dtype), *args, **kwargs)\n"
            "print(sorted(m for m in ('sympy', 'torch.fx.experimental.symbolic_shapes') if m in sys.modules))\n")
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
