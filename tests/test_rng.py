"""Seeded draws that leave the caller's generator alone (:mod:`autograder.rng`)."""

import pytest
import torch


def test_cpu_seeded_draws_as_manual_seed_does_and_restores_the_generator():
    from autograder.rng import cpu_seeded

    torch.manual_seed(123)
    after_123 = torch.rand(3)
    torch.manual_seed(5)
    outside = torch.get_rng_state()
    with cpu_seeded(123):
        inside = torch.rand(3)
    assert torch.equal(inside, after_123)
    assert torch.equal(torch.get_rng_state(), outside)
    with pytest.raises(ZeroDivisionError), cpu_seeded(7):
        torch.rand(2)
        1 / 0
    assert torch.equal(torch.get_rng_state(), outside)
