"""`tkit doctor`'s note on a font covering Korean (the HTML reports' CJK font stack)."""

import subprocess

from autograder.commands import doctor


def _fake(stdout=None, error=None):
    def run(argv, **kwargs):
        assert argv == ["fc-list", ":lang=ko", "family"]
        if error:
            raise error
        return subprocess.CompletedProcess(argv, 0, stdout=stdout, stderr="")
    return run


def test_a_korean_font_is_named():
    family = doctor.cjk_font(_fake("Noto Sans CJK KR,Noto Sans CJK KR Regular\nNanumGothic\n"))
    assert family == "NanumGothic"
    assert doctor.font_note(family) == "Korean font for the reports: NanumGothic"


def test_no_korean_font_gives_an_install_note():
    assert doctor.cjk_font(_fake("")) is None
    assert doctor.cjk_font(_fake(error=FileNotFoundError("fc-list"))) is None
    note = doctor.font_note(None)
    assert "no font covering Korean" in note and "fonts-noto-cjk" in note


def test_the_report_font_stack_names_common_korean_fonts():
    from autograder import paths

    style = (paths.templates_dir() / "_style.html").read_text(encoding="utf-8")
    for family in ("Noto Sans CJK KR", "Apple SD Gothic Neo", "Malgun Gothic"):
        assert family in style
