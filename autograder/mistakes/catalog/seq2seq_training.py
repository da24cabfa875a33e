"""Known mistakes of exercise 12, ``seq2seq_training.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, families  # noqa: F401
from autograder.mistakes.catalog import Mutant  # noqa: F401

# -- sequence_loss and teacher_forcing -----------------------------------------------------------
MUTANTS: list = []

# -- train_transformer's loop (named by autograder.checks.seq2seq_loop) --------------------------
