"""The child's runner (:mod:`autograder.child.runner`): the seeding before every test."""

import random

import torch

from autograder.child.runner import seed_everything


def test_seed_everything_gives_the_state_of_torch_manual_seed():
    torch.manual_seed(1234)
    expected_torch = torch.rand(5)
    random.seed(1234)
    expected_random = random.random()
    torch.manual_seed(99)
    random.seed(99)
    seed_everything(1234)
    assert torch.equal(torch.rand(5), expected_torch)
    assert random.random() == expected_random


def test_seed_everything_seeds_numpy_when_imported():
    import numpy as np

    np.random.seed(1234)
    expected = np.random.rand(3)
    np.random.seed(7)
    seed_everything(1234)
    assert (np.random.rand(3) == expected).all()
