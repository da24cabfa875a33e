"""The in-process baseline of ``bench_batch.py`` (not a test): the kit's own public and hidden
tests of some exercises, run on one submission in THIS interpreter, unsandboxed.

    python benchmarks/inprocess_baseline.py SUBMISSION_DIR EXERCISE [EXERCISE...]

The submission's modules are imported here (:func:`autograder.mistakes.implementations.load_modules`) and
stand in for the sandboxed child: the same suites, fixtures, comparisons and seeds, without
the child, its round trips or its resets. It is the naive way a grader would run the same
tests (one fresh interpreter per student, paying ``import torch`` each time), and prints the
score it found as ``score <got>/<max>``. Never use it on untrusted code.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.mistakes import implementations  # noqa: E402
from autograder.run import grading, plugin  # noqa: E402
from autograder.sandbox import Limits  # noqa: E402


class InProcessImpl(implementations.LocalImpl):
    """A submission folder loaded in this process, with the lifecycle a RemoteImpl offers
    (start, reset, close...) as no-ops, so the plugin drives it unchanged."""

    def __init__(self, submission: Path, limits=None, label: str = "submission"):
        submission = Path(submission)
        super().__init__(implementations.load_modules(implementations.read_sources(submission), submission, label)._modules,
                         label)
        self.submission, self.info, self.test_output, self.exercise = submission, {}, "", None
        self.limits = limits or Limits()  # the plugin sets limits.preload_training on it

    def start(self) -> None:
        pass

    def close(self, keep_spare: bool = False) -> None:
        pass

    def prepare_spare(self) -> None:
        pass

    def set_budgets(self, budgets, time_limit) -> None:
        pass

    def begin_test(self, exercise) -> None:
        self.exercise = exercise

    def given_up(self, exercise) -> None:
        return None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed(seed)


def main() -> None:
    folder, names = Path(sys.argv[1]), sys.argv[2:]
    plugin.RemoteImpl = InProcessImpl  # the plugin builds its student from this name
    results = grading.grade_folder(folder, names=names, seed=0, training=False)
    total = sum(t.max_score for t in results.tests)
    print(f"score {results.score}/{total}")
    if results.score < total:  # a baseline that fails its tests measures nothing (it stops early)
        failed = [t.name for t in results.tests if t.score < t.max_score]
        sys.exit(f"in-process baseline lost points on a correct submission: {failed[:5]}")


if __name__ == "__main__":
    main()
