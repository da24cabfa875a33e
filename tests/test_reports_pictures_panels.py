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
