"""Hidden twins of the public tests: the same test again, on fresh draws of the same kind.

A public test's inputs are public: code right only on them would earn its points. So in a run
that grades the hidden tests too, every public test (but one marked ``no_twin(reason)``) runs a
second time among the hidden tests, as its *twin*: the same function under the twin's own node
id, hence its own seed, so its ``seed``, ``rng`` and ``example`` fixtures give other draws of the
same kind (:class:`autograder.checks.examples.Example`). The twin has no points of its own: the
public test's points are paid as far as its twin passes (:mod:`.payment`). The twins are made
here, at collection, from the public items themselves: no suite declares them, so none can be
forgotten. The self-check (public tests only) has none.
"""

from __future__ import annotations

import pytest

from autograder.run import rubric

SUFFIX = "twin"


def twin_of(item) -> str | None:
    """The node id of the public test ``item`` is the twin of (None: not a twin)."""
    return rubric.marker_arg(item, "twin_of")


def add(items: list) -> None:
    """Append to ``items`` the twin of each public test that may have one, when ``items`` hold
    hidden tests too (a run that grades the hidden tests)."""
    if not any(rubric.visibility_of(item) == "hidden" for item in items):
        return
    items += [_twin(item) for item in list(items)
              if rubric.visibility_of(item) == "public" and item.get_closest_marker("no_twin") is None]


def _twin(item):
    """A copy of the test ``item`` (its function, parameters and fixtures), hidden, marked as its twin."""
    callspec = getattr(item, "callspec", None)
    name = f"{item.name}[{SUFFIX}]" if callspec is None else f"{item.name[:-1]}-{SUFFIX}]"
    twin = pytest.Function.from_parent(item.parent, name=name, callspec=callspec, callobj=item.obj,
                                       fixtureinfo=item._fixtureinfo, originalname=item.originalname)
    twin.add_marker(pytest.mark.visibility("hidden"))
    twin.add_marker(pytest.mark.twin_of(item.nodeid))
    return twin
