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

import dataclasses

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
    """A copy of the test ``item`` (its function, parameters and fixtures), hidden, marked as its twin.

    Its node id is the original's with ``twin`` among the parameters (``test_x[twin]``,
    ``test_x[a-twin]``): pytest 9.2 builds a function's node id from ``originalname`` and the call
    spec's ids, older versions from ``name``, so both carry the suffix.

    :raises RuntimeError: if pytest gave the twin the original's node id anyway."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        name = originalname = f"{item.name}[{SUFFIX}]"
    else:
        callspec = dataclasses.replace(callspec, _idlist=(*callspec._idlist, SUFFIX))
        name, originalname = f"{item.originalname}[{callspec.id}]", item.originalname
    twin = pytest.Function.from_parent(item.parent, name=name, callspec=callspec, callobj=item.obj,
                                       fixtureinfo=item._fixtureinfo, originalname=originalname)
    if twin.nodeid == item.nodeid:
        raise RuntimeError(f"the twin of {item.nodeid} got the same node id (a pytest change?)")
    twin.add_marker(pytest.mark.visibility("hidden"))
    twin.add_marker(pytest.mark.twin_of(item.nodeid))
    return twin
