"""Every test of the kit has its own name in reports, in English and in Korean: two tests with one title
(a parametrized test's cases, or the same wording in two exercises) read as one test in a report and
in the class summary's pass rates."""

import contextlib
import io
from collections import Counter

import pytest

from autograder import paths
from autograder.i18n import using
from autograder.run import plugin


class _Titles:
    def __init__(self):
        self.items = []

    def pytest_collection_finish(self, session):
        self.items = list(session.items)


@pytest.fixture(scope="module")
def suite_items():
    files = sorted(p for vis in ("public", "hidden") for p in (paths.suites_dir() / vis).glob("test_*.py"))
    collector = _Titles()
    args = [str(f) for f in files] + ["--collect-only", "-q", "-c", str(paths.suites_dir() / "pytest.ini"),
                                      "--rootdir", str(paths.suites_dir()), "-p", "autograder.run.plugin",
                                      "--noconftest", "-p", "no:cacheprovider"]
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(args, plugins=[collector])
    assert collector.items
    return collector.items


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_no_two_tests_share_a_title(suite_items, lang):
    with using(lang):
        titles = [plugin.item_meta(item)["description"] for item in suite_items]
    repeated = [title for title, n in Counter(titles).items() if n > 1]
    assert repeated == []


def test_a_parametrized_test_names_its_parameters(suite_items):
    with using("en"):
        names = {item.nodeid: plugin.item_meta(item)["description"] for item in suite_items}
    post = next(n for k, n in names.items() if k.endswith("test_layer_matches_pytorch[post_ln]") and "encoder" in k)
    assert post.endswith(" (norm_first=False)")
