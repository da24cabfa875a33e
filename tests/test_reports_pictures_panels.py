"""The PE picture's difference panel and the AutoEncoder caption's word on the secret transform."""

import base64

import pytest

from autograder.reports import pictures, render
from autograder.i18n import using


def _png_size(uri: str) -> tuple[int, int]:
    raw = base64.b64decode(uri.split(",", 1)[1])
    return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")


def test_the_pe_picture_has_a_third_panel_and_refuses_mismatched_tables():
    table = [[0.0, 1.0], [0.5, 0.8]]
    labels = render.picture_labels()
    width, height = _png_size(pictures.draw_pe({"got": table, "expected": table}, labels))
    assert width > 2.5 * height          # three panels side by side (two were ~2:1)
    with pytest.raises(pictures.FigureDataError, match="shape"):
        pictures.draw_pe({"got": table, "expected": [[0.0, 1.0, 2.0]]}, labels)


def test_the_autoencoder_caption_explains_the_transform_in_both_languages():
    with using("en"):
        assert "secret transform" in render.picture_labels()["ae_reconstructions_caption"]
    with using("ko"):
        assert "비밀 변환" in render.picture_labels()["ae_reconstructions_caption"]


def test_the_cjk_font_is_a_font_family_matplotlib_falls_back_to(monkeypatch):
    """matplotlib falls back glyph by glyph only between the families of ``font.family``; a CJK
    font listed in ``font.sans-serif`` behind DejaVu Sans drew every Hangul glyph as a box
    (seen in headless Chromium once Noto CJK was installed)."""
    import matplotlib

    from autograder.reports import pictures

    monkeypatch.setattr(pictures, "cjk_font", lambda: "Noto Sans CJK KR")
    with pictures._fonts():
        assert list(matplotlib.rcParams["font.family"]) == ["DejaVu Sans", "Noto Sans CJK KR"]
    monkeypatch.setattr(pictures, "cjk_font", lambda: None)
    with pictures._fonts():
        assert list(matplotlib.rcParams["font.family"]) == ["DejaVu Sans"]


def test_blocked_cells_without_weight_carry_no_number_and_a_leak_is_marked():
    from autograder.reports import pictures

    data = {"weights": [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], "blocked": [[False, False, True], [False, False, True]]}
    fig = pictures.attention_figure(data, "attention_padded", {"key": "key", "query": "query"})
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t for t in fig.axes[0].texts}
    assert (2, 0) not in texts                       # blocked, no weight: the hatching says it
    assert texts[(2, 1)].get_text() == ".50" and texts[(2, 1)].get_bbox_patch() is not None   # a leak
    assert texts[(0, 0)].get_bbox_patch() is None
