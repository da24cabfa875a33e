"""Every string of a report in the report's language: no Hangul in an English report, no English
sentence in a Korean one outside code, identifiers, names, numbers and student text (the checker
and its definitions: tests/report_language.py).

The slow test grades five students of the sample class (bob untouched, chen and dana with named
mistakes, eve's syntax error and missing files, farid's timeouts) once per language, and checks
their feedback.md, feedback.html, the class's summary.html, ``tkit check -v`` (and its ``--html``
report) on dana, and the terminal table of every graded student."""

from __future__ import annotations

import gettext
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from autograder import i18n
from autograder.reports import console, pictures, render
from autograder.results.model import as_results
from report_language import english_sentences, hangul, kit_text, problems, visible_html, visible_markdown

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "sample_class"
STUDENTS = ("bob", "chen", "dana", "eve.zip", "farid")
SEED = "20240901"


# -- the checker itself (fast) -------------------------------------------------------------------
def test_the_checker_finds_the_known_leaks_and_passes_their_fixes():
    leak = "(memory, logits) with 3 more padding columns on the source의 0번째 항목의 값이 256개 위치 중 255곳에서 틀립니다"
    assert english_sentences(leak) == ["more padding columns on the"]
    fixed = "소스에 패딩 열 3개를 더 붙인 (memory, logits)의 0번째 항목의 값이 256개 위치 중 255곳에서 틀립니다"
    assert english_sentences(fixed) == []
    assert english_sentences("rope.apply_rope(...)이(가) 끝나지 않았습니다: timed out after 5 s") == ["timed out after"]
    assert hangul("not implemented yet: embedding (아직 구현되지 않았습니다)")
    assert hangul("not implemented yet: embedding: TokenEmbedding.__init__") == []


def test_the_checker_leaves_out_code_identifiers_and_python_s_own_words():
    assert english_sentences(visible_markdown("설명 `with three more words` 끝")) == []
    assert english_sentences(visible_html("<p>설명 <code>with three more words</code></p>")) == []
    assert english_sentences("scaled_dot_product_attention(q[2, 3, 4], k[2, 5, 4]), make_causal_mask(5)") == []
    assert english_sentences("embedding, masks, attention, multi_head_attention, encoder") == []
    python = "multi_head_attention.py의 63번째 줄에 문법 오류가 있습니다: '(' was never closed"
    assert english_sentences(python) == ["was never closed"]
    assert english_sentences(kit_text(python)) == []
    assert english_sentences(kit_text("ValueError: the mask must be boolean, got float")) == []
    assert english_sentences(kit_text("the student wrote this", students=("the student wrote this",))) == []


# -- the catalog and the test names (fast) ------------------------------------------------------
def test_every_korean_catalog_entry_is_korean():
    from babel.messages.pofile import read_po

    with open(i18n.LOCALE_DIR / "ko" / "LC_MESSAGES" / "tkit.po", "rb") as f:
        catalog = read_po(f)
    wrong = []
    for message in catalog:
        if not message.id:
            continue
        for text in message.string if isinstance(message.string, tuple) else (message.string,):
            words = re.sub(r"\{[^}]*\}|%\([^)]*\)[sd]|`[^`]*`", " ", text)   # placeholders and code
            if not hangul(text) or english_sentences(words):
                wrong.append(text)
    assert wrong == []


def test_every_test_of_the_suites_has_a_korean_name():
    import ast

    unnamed = []
    for path in sorted((REPO / "autograder" / "suites").glob("*/test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                lines = [line for line in (ast.get_docstring(node) or "").splitlines() if line.strip().startswith("ko:")]
                if not (lines and hangul(lines[0])):
                    unnamed.append(f"{path.name}::{node.name}")
    assert unnamed == []


# -- picture words (fast) ------------------------------------------------------------------------
def _texts(fig) -> set[str]:
    from matplotlib.text import Text

    texts = {t.get_text() for t in fig.findobj(Text) if t.get_text()}
    texts |= {t.get_text() for ax in fig.axes for t in ax.get_yticklabels() if t.get_text()}
    import matplotlib.pyplot as plt

    plt.close(fig)
    return texts


def _figures(labels: dict) -> list[set[str]]:
    table = [[0.0, 1.0], [0.5, -0.5]]
    return [
        _texts(pictures.pe_figure({"got": table, "expected": table}, labels)),
        _texts(pictures.attention_figure({"weights": [[0.5, 0.5], [1.0, 0.0]], "blocked": [[False, False], [False, True]]},
                                         "attention_padded", labels)),
        _texts(pictures.reconstructions_figure({"originals": [[[0.0] * 4] * 4] * 2,
                                                "reconstructions": [[[1.0] * 4] * 4] * 2}, labels)),
        _texts(pictures.loss_figure({"losses": [0.3, 0.2, 0.1]}, labels)),
        _texts(pictures.histogram_figure([10.0, 50.0, 90.0], 100.0, labels)),
    ]


IN_PICTURE = {"yours": 0, "expected": 0, "difference": 0, "dimension": 0, "position": 0, "query": 1, "key": 1,
              "originals": 2, "reconstructions": 2, "epoch": 3, "loss": 3, "score": 4, "students": 4}


def test_a_korean_picture_draws_the_korean_catalog_words_where_a_korean_font_exists(monkeypatch):
    monkeypatch.setattr(pictures, "cjk_font", lambda: "DejaVu Sans")   # as if a CJK font were installed
    with i18n.using("en"):
        english = render.picture_labels()
    with i18n.using("ko"):
        labels = render.picture_labels()
    catalog = gettext.translation("tkit", localedir=str(i18n.LOCALE_DIR), languages=["ko"])
    drawn = _figures(labels)
    for key, figure in IN_PICTURE.items():
        assert labels[key] == catalog.gettext(english[key]) != english[key], key
        assert hangul(labels[key]), key
        assert labels[key] in drawn[figure], (key, drawn[figure])
        assert english[key] not in drawn[figure], key
    for texts in _figures(english):
        assert not any(hangul(t) for t in texts)


def test_without_a_korean_font_the_picture_keeps_english_words_and_the_caption_stays_korean(monkeypatch):
    monkeypatch.setattr(pictures, "cjk_font", lambda: None)
    with i18n.using("en"):
        english = render.picture_labels()
    with i18n.using("ko"):
        labels = render.picture_labels()
    for key in IN_PICTURE:
        assert labels[key] == english[key], key   # no boxes where a Korean word would be
    assert hangul(labels["pe_table"]) and hangul(labels["pe_table_caption"])   # drawn by the browser


# -- the rendered reports of the sample class (slow) ---------------------------------------------
def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "cli.py"), *args], cwd=REPO, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=1800)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    """``{lang: {"texts": [(name, kind, text)], "students": [...], "grade_output": str}}``."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "1000", "NO_COLOR": "1",
           "TKIT_GRADING_SECRET": os.environ.get("TKIT_GRADING_SECRET", "transformer-kit tests: a fixed grading secret")}
    found = {}
    for lang in ("en", "ko"):
        out = tmp_path_factory.mktemp(f"graded-{lang}")
        grade = _run(["grade", *(str(SAMPLE / s) for s in STUDENTS), "--out", str(out), "--seed", SEED,
                      "--lang", lang], env)
        assert grade.returncode == 0, grade.stdout + grade.stderr
        html_path = out / "check.html"
        check = _run(["check", "--path", str(SAMPLE / "dana"), "--lang", lang, "-v", "--html", str(html_path)], env)
        assert check.returncode == 1, check.stdout + check.stderr   # dana fails some tests
        texts = [("tkit check -v (dana)", "console", check.stdout), ("check.html (dana)", "html", html_path.read_text()),
                 ("summary.html", "html", (out / "summary.html").read_text())]
        students = []
        for folder in sorted((out / "submissions").iterdir()):
            students.append(folder.name)
            for name in ("feedback.md", "feedback.html"):
                texts.append((f"{folder.name}/{name}", name.rsplit(".", 1)[1], (folder / name).read_text()))
            results = as_results(json.loads((folder / "results.json").read_text()))
            terminal = Console(record=True, width=1000, color_system=None)
            with i18n.using(lang), terminal.capture() as captured:
                console.print_results(results, terminal, verbose=True)
            texts.append((f"{folder.name} (terminal)", "console", captured.get()))
        found[lang] = {"texts": texts, "students": students, "grade_output": grade.stdout + grade.stderr}
    return found


@pytest.mark.slow   # two gradings of five students
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_sample_class_reports_are_in_their_language(reports, lang):
    wrong = {}
    for name, kind, text in reports[lang]["texts"]:
        found = problems(text, lang, kind, reports[lang]["students"])
        if found:
            wrong[name] = sorted(set(found))
    assert wrong == {}, json.dumps(wrong, ensure_ascii=False, indent=1)
    assert len(reports[lang]["texts"]) == 3 + 3 * len(STUDENTS)


@pytest.mark.slow   # shares the gradings above
def test_tkit_grade_s_terminal_lines_are_in_the_language(reports):
    assert "채점 중" in reports["ko"]["grade_output"] and "grading" not in reports["ko"]["grade_output"]
    assert not hangul(reports["en"]["grade_output"])


def test_drawing_a_picture_leaves_matplotlib_s_settings_alone(monkeypatch):
    import matplotlib

    monkeypatch.setattr(pictures, "cjk_font", lambda: "DejaVu Sans")
    before = (matplotlib.rcParams["font.family"], list(matplotlib.rcParams["font.sans-serif"]))
    assert pictures.draw_loss({"losses": [0.3, 0.2]}, render.picture_labels()).startswith("data:image/png")
    assert (matplotlib.rcParams["font.family"], list(matplotlib.rcParams["font.sans-serif"])) == before
