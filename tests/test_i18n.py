"""The Korean catalog: every student-facing msgid is translated and the .mo matches the .po.

To update after changing text: ``scripts/update_catalog.sh`` (see its header).
"""

import gettext
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from autograder import i18n

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "autograder" / "locale"
PO = LOCALE / "ko" / "LC_MESSAGES" / "tkit.po"
MO = LOCALE / "ko" / "LC_MESSAGES" / "tkit.mo"


@pytest.fixture(scope="module")
def po():
    with PO.open("rb") as f:
        return read_po(f, locale="ko")


def test_every_msgid_in_the_sources_is_in_the_catalog(po):
    with (LOCALE / "babel.cfg").open() as f:
        method_map, options_map = parse_mapping_cfg(f)
    found = {msg[2] if isinstance(msg[2], str) else msg[2][0]
             for msg in extract_from_dir(str(ROOT), method_map, options_map)}
    missing = sorted(m for m in found if m not in po)
    assert not missing, f"run scripts/update_catalog.sh and translate: {missing}"


def test_no_msgid_lacks_a_korean_translation(po):
    untranslated = [m.id for m in po if m.id and (not all(m.string if m.pluralizable else (m.string,)) or m.fuzzy)]
    assert not untranslated, f"translate these in {PO}: {untranslated}"


def test_placeholders_survive_translation(po):
    import string

    def fields(text):
        return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name)

    for m in po:
        if m.id and "{" in m.id:
            assert fields(m.id) == fields(m.string), m.id


def test_korean_particles_attach_to_the_word_before_them(po):
    """No stray space inside a Korean word: a particle or counter right after a placeholder or
    an ASCII word is written without a space ("{what}의 {i}번째 항목", not "{what} 의 {i} 번째"),
    so composed messages never read "0 번째 항목 의 값이"."""
    import re

    stray = re.compile(r"[}A-Za-z0-9_)\]] (을|를|이|가|은|는|의|에|에서|로|으로|와|과|입니다|이어야|번째|개)(?=[ \",.:;)]|$)")
    strings = [text for m in po if m.id for text in (m.string if m.pluralizable else (m.string,))]
    bad = [text for text in strings if stray.search(text)]
    assert not bad, bad


def test_the_mo_is_compiled_from_the_current_po(po):
    with MO.open("rb") as f:
        compiled = gettext.GNUTranslations(f)
    for m in po:
        if m.id and m.pluralizable:   # Korean has one plural form
            assert compiled.ngettext(m.id[0], m.id[1], 2) == m.string[0], f"stale {MO.name}: run scripts/update_catalog.sh"
        elif m.id:
            assert compiled.gettext(m.id) == m.string, f"stale {MO.name}: run scripts/update_catalog.sh"
    assert len(compiled._catalog) - 1 == sum(1 for m in po if m.id)   # minus the header entry


def test_the_underscore_function_translates_and_falls_back():
    with i18n.using("ko") as lang:
        assert lang == "ko"
        assert i18n._("{score} of {max} points").format(score=3, max=8) == "8점 중 3점"
        assert i18n._("a text nobody translated") == "a text nobody translated"
        with i18n.using("en"):
            assert i18n._("Feedback") == "Feedback"
        with i18n.using(None):   # None keeps the language around the block
            assert i18n.language() == "ko" and i18n.authored("points", "점수") == "점수"
        assert i18n._("Feedback") != "Feedback"   # the inner block's language is gone with it
        with pytest.raises(ValueError, match="lang must be one of en, ko, got 'fr'"):
            with i18n.using("fr"):
                pass
        assert i18n.language() == "ko"
