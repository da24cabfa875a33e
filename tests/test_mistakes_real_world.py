"""Real-style wrong and other-convention implementations (``tests/data/real_world``, written as
students and tutorials write them, not as patches of the reference) are each named as their class of
mistake on their own exercise, the first one named first (a forbidden function's use names the function
and the mistake its values show). ``python tests/data/real_world/measure.py`` prints the same table."""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "data" / "real_world"
MANIFEST = json.loads((HERE / "MANIFEST.json").read_text(encoding="utf-8"))


def test_the_manifest_names_catalog_mistakes_and_real_files():
    from autograder.mistakes import catalog, diagnosis

    assert len(MANIFEST) >= 40
    for name, (exercise, *expected) in MANIFEST.items():
        files = {f.stem for f in (HERE / name).glob("*.py")}
        assert exercise in files, name
        for mistake_id in expected:
            if mistake_id in diagnosis.FORBIDDEN:   # a forbidden function: named by what the code called
                continue
            assert catalog.by_id(mistake_id).exercise == exercise, name
            assert catalog.by_id(mistake_id).target in files, name


@pytest.mark.slow
def test_every_real_style_implementation_is_named_as_its_class():
    sys.path.insert(0, str(HERE))
    try:
        import measure
    finally:
        sys.path.remove(str(HERE))
    rows = measure.measure(HERE.parents[2])
    wrong = [(name, expected, named) for name, _, expected, named, _, _ in rows if set(expected) - set(named)]
    assert not wrong
    for name, exercise, expected, named, score, top in rows:
        if not expected:   # legitimate code: full marks, nothing named
            assert score == top and not named, (name, score, named)
            continue
        assert score < top, name            # each loses points on its own exercise
        assert named[0] == expected[0], (name, named)   # and its first named mistake is its own
