"""Real-style wrong and other-convention implementations (``tests/data/real_world``, written as
students and tutorials write them, not as patches of the reference) are each named as their class of
mistake on their own exercise. ``python tests/data/real_world/measure.py`` prints
the same table."""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "data" / "real_world"
MANIFEST = json.loads((HERE / "MANIFEST.json").read_text(encoding="utf-8"))


def test_the_manifest_names_catalog_mistakes_and_real_files():
    from autograder.mistakes import catalog

    assert len(MANIFEST) >= 12
    for name, (exercise, expected) in MANIFEST.items():
        assert catalog.by_id(expected).exercise == exercise, name
        files = list((HERE / name).glob("*.py"))
        assert catalog.by_id(expected).target in {f.stem for f in files}, name


@pytest.mark.slow
def test_every_real_style_implementation_is_named_as_its_class():
    sys.path.insert(0, str(HERE))
    try:
        import measure
    finally:
        sys.path.remove(str(HERE))
    rows = measure.measure(HERE.parents[2])
    wrong = [(name, expected, named) for name, _, expected, named, _, _ in rows if expected not in named]
    assert not wrong
    for name, exercise, expected, named, score, top in rows:
        assert score < top, name            # each loses points on its own exercise
        assert named[0] == expected, (name, named)   # and its first named mistake is its own
