"""What a passing test awards and attaches: partial credit and plot data for the reports.

The plugin's ``partial`` and ``attach`` fixtures (:mod:`autograder.run.plugin`) hand these to tests.
A training test also attaches its held-out figure as ``leaderboard`` data
(``attach("leaderboard", title=..., value=..., order="asc")``): :func:`take_leaderboard` takes it
out of the records before they are written, for Gradescope's leaderboard or for nothing.
"""

from __future__ import annotations


class PartialCredit:
    """Lets a passing test award a fraction of its points (``award(0.5, "why")``)."""

    def __init__(self):
        self.fraction = 1.0
        self.note = ""

    def award(self, fraction: float, note: str = "") -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be within [0, 1], got {fraction}")
        self.fraction = fraction
        self.note = note


class Attachments:
    """Plot data a test attaches to its record (``attach("pe_table", got=table, expected=ref)``).

    Values are stored under ``extra_data["figures"][name]`` of the test's record and drawn by
    :mod:`autograder.reports.pictures`. Tensors become nested lists of floats; keep them small (at most
    ``MAX_FIGURE_VALUES`` numbers per figure). Hidden tests' figures are never shown to students.
    """

    MAX_FIGURE_VALUES = 4096

    def __init__(self):
        self.figures: dict[str, dict] = {}

    def __call__(self, name: str, **data) -> None:
        plain = {key: _plain_data(value) for key, value in data.items()}
        count = sum(_count_numbers(v) for v in plain.values())
        if count > self.MAX_FIGURE_VALUES:
            raise ValueError(f"figure {name!r} holds {count} numbers; at most {self.MAX_FIGURE_VALUES} allowed")
        self.figures[name] = plain


def _plain_data(value):
    """Tensors (and numpy arrays) to nested lists of Python numbers; other values unchanged."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        return value.double().tolist() if value.is_floating_point() else value.tolist()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain_data(v) for v in value]
    return value


def _count_numbers(value) -> int:
    if isinstance(value, list):
        return sum(_count_numbers(v) for v in value)
    return 1


LEADERBOARD = "leaderboard"   # the figure name of a test's leaderboard entry


def take_leaderboard(results) -> list[dict]:
    """Remove every test's ``leaderboard`` data from ``results`` (a
    :class:`~autograder.results.model.Results`); return them as Gradescope's leaderboard entries
    ``{"name", "value", "order"?}`` (the attached ``title`` is the name; those with a numeric
    value), in test order."""
    entries = []
    for test in results.tests:
        entry = (test.figures or {}).pop(LEADERBOARD, None)
        if test.figures == {}:
            test.figures = None
        if isinstance(entry, dict) and isinstance(entry.get("value"), (int, float)):
            entries.append({"name": str(entry.get("title", "")), "value": entry["value"],
                            **({"order": entry["order"]} if "order" in entry else {})})
    return entries
