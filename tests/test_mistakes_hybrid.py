"""The hybrid search (:mod:`autograder.mistakes.hybrid`): an integration test's failure is blamed on the
composite's own code, or on each component whose student file changes the output by itself (a served
component computes with the reference inside, so a component's file runs only under its users')."""

from autograder.mistakes import hybrid


class _Impl:
    def __init__(self, keep):
        self.keep = set(keep)

    def reset(self, seed=None):
        pass


class _Hybrids(hybrid.Hybrids):
    """Hybrids that record which student files each run kept, without children."""

    def __init__(self):
        super().__init__()
        self.runs = []

    def get(self, student, keep):
        self.runs.append(tuple(keep))
        return _Impl(keep)


def _same(output, expected):
    if output != expected:
        raise AssertionError(f"{output} != {expected}")


def _model(wrong):
    """An encoder's output where the student's files ``wrong`` are wrong: a component's file counts
    only when every file between it and the encoder is the student's (``users``)."""
    users = {"attention": {"multi_head_attention"}, "masks": {"multi_head_attention", "attention"},
             "multi_head_attention": set(), "feed_forward": set()}

    def run(impl):
        return sum(1 for name in wrong if name in impl.keep and users[name] <= impl.keep)

    return run


def test_the_culprit_is_the_wrong_file_not_the_files_that_import_it():
    for wrong in ({"attention"}, {"multi_head_attention"}, {"masks"}, {"attention", "multi_head_attention"}):
        verdict = hybrid.blame(_Hybrids(), None, "encoder", _model(wrong), 0, _same, expected=0)
        assert verdict == hybrid.Verdict(hybrid.COMPONENTS, components=tuple(
            n for n in ("multi_head_attention", "feed_forward", "attention", "masks") if n in wrong)), wrong


def test_each_kept_set_runs_once():
    hybrids = _Hybrids()
    hybrid.blame(hybrids, None, "encoder", _model({"masks"}), 0, _same, expected=0)
    assert len(hybrids.runs) == len(set(hybrids.runs))
    assert hybrids.runs[0] == ("encoder",)


def test_an_own_mistake_is_found_without_trying_components():
    hybrids = _Hybrids()
    own = lambda impl: 3.0  # noqa: E731
    verdict = hybrid.blame(hybrids, None, "multi_head_attention", own, 0, _same, expected=0.0)
    assert verdict == hybrid.Verdict(hybrid.OWN, output=3.0) and hybrids.runs == [("multi_head_attention",)]
