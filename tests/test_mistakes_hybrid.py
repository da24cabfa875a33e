"""The hybrid search's bound (:mod:`autograder.mistakes.hybrid`): a composite's culprits found by one test are tried first,
together, by the next; the one-by-one search runs only when they do not explain the output."""

from autograder.mistakes import hybrid


class _Impl:
    def __init__(self, keep):
        self.keep = keep

    def reset(self, seed=None):
        pass


class _Hybrids(hybrid.Hybrids):
    """Hybrids that record which student files each run kept, without children."""

    def __init__(self):
        super().__init__()
        self.runs = []

    def get(self, student, keep):
        keep = tuple(sorted(keep))
        self.runs.append(keep)
        return _Impl(keep)


def _same(output, expected):
    if output != expected:
        raise AssertionError(f"{output} != {expected}")


def test_known_culprits_are_tried_first_and_the_search_runs_when_they_do_not_explain_the_output():
    hybrids = _Hybrids()
    wrong_attention = lambda impl: 1.0 if "attention" in impl.keep else 0.0  # noqa: E731
    first = hybrid.blame(hybrids, None, "multi_head_attention", wrong_attention, 0, _same, got=1.0, expected=0.0)
    assert first == hybrid.Verdict(hybrid.COMPONENTS, components=("attention",))
    assert hybrids.runs == [("multi_head_attention",), ("attention", "multi_head_attention"),
                            ("masks", "multi_head_attention")]
    hybrids.runs.clear()
    second = hybrid.blame(hybrids, None, "multi_head_attention", wrong_attention, 0, _same, got=1.0, expected=0.0)
    assert second == first
    assert hybrids.runs == [("multi_head_attention",), ("attention", "multi_head_attention")]  # one run less
    hybrids.runs.clear()
    wrong_masks = lambda impl: 2.0 if "masks" in impl.keep else 0.0  # noqa: E731
    third = hybrid.blame(hybrids, None, "multi_head_attention", wrong_masks, 0, _same, got=2.0, expected=0.0)
    assert third == hybrid.Verdict(hybrid.COMPONENTS, components=("masks",))
    assert hybrids.runs == [("multi_head_attention",), ("attention", "multi_head_attention"),
                            ("attention", "multi_head_attention"), ("masks", "multi_head_attention")]
    assert hybrids.culprits == {"multi_head_attention": ("masks",)}


def test_an_own_mistake_is_found_without_trying_components():
    hybrids = _Hybrids()
    own = lambda impl: 3.0  # noqa: E731
    verdict = hybrid.blame(hybrids, None, "multi_head_attention", own, 0, _same, got=3.0, expected=0.0)
    assert verdict == hybrid.Verdict(hybrid.OWN, output=3.0) and hybrids.runs == [("multi_head_attention",)]
