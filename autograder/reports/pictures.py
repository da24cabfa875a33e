"""Pictures for the feedback reports, drawn from data of the grading run.

Two sources of plot data, both plain lists of numbers stored in results.json:

* ``extra_data["figures"]`` of a test record, attached by the test through the plugin's
  ``attach`` fixture (e.g. the AutoEncoder training test attaches the loss curve and a
  few reconstructions);
* ``extra_data["figures"]`` of the submission, filled by :func:`collect_from_session` in the public
  tests' child before the hidden tests start: the student's own functions called through
  :class:`autograder.sandbox.remote.RemoteImpl` on small fixed inputs (the positional-encoding table
  and the attention weights of a padded and a causal example). These cost no points and use only
  inputs and formulas printed in exercises/README.md, so nothing hidden leaks.

Figure names and the data each holds (lists are nested lists of floats):

=====================  ================================================================
``pe_table``           ``got`` [L, D] the student's ``sinusoidal_table``, ``expected`` [L, D]
``attention_padded``   ``weights`` [S_q, S_k], ``blocked`` [S_q, S_k] (True = masked key)
``attention_causal``   same as ``attention_padded``
``ae_reconstructions`` ``originals`` [N, 28, 28] and ``reconstructions`` [N, 28, 28] in [0, 1]
``loss_curve``         ``losses``: mean training loss of each epoch (or step)
=====================  ================================================================

:func:`render` turns them into PNG data URIs (``data:image/png;base64,...``) with
matplotlib (Agg backend, no display needed) and numpy: drawing imports no torch.
"""

from __future__ import annotations

import base64
import io
import math
import time
from typing import Callable

FIGURES = {"pe_table": "positional_encoding", "attention_padded": "attention", "attention_causal": "attention",
           "ae_reconstructions": "autoencoder", "loss_curve": "autoencoder"}   # report order -> its exercise
PE_SHAPE = (32, 32)           # (max_len, d_model) of the pictured table
ATTENTION_SHAPE = (6, 6, 8)   # (S_q, S_k, d_k) of the pictured attention examples
PADDED_KEYS = 2               # the last PADDED_KEYS keys are padding in the padded example
PICTURES_TIMEOUT = 60.0       # seconds the pictures' requests may take together


class FigureDataError(ValueError):
    """Plot data has the wrong structure (names the figure and the field)."""


# -- data from the student's code ---------------------------------------------------------
def formula_table(max_len: int, d_model: int):
    """The sinusoidal table of exercises/README.md, float64 ``[max_len, d_model]``:
    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))``, ``PE[pos, 2i+1] = cos(...)``."""
    import torch

    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    div = torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos / div)
    table[:, 1::2] = torch.cos(pos / div)
    return table


def attention_examples():
    """The fixed inputs of the two attention pictures: ``(q, k, v, padded_mask, causal_mask)``,
    ``q, k, v`` float32 ``[1, S, d_k]``, masks bool (True = blocked): padded ``[1, 1, S_k]``
    (the last ``PADDED_KEYS`` keys), causal ``[S_q, S_k]`` (strictly above the diagonal)."""
    import torch

    s_q, s_k, d_k = ATTENTION_SHAPE
    gen = torch.Generator().manual_seed(2017)
    q = torch.randn(1, s_q, d_k, generator=gen)
    k = torch.randn(1, s_k, d_k, generator=gen)
    v = torch.randn(1, s_k, d_k, generator=gen)
    padded = torch.zeros(1, 1, s_k, dtype=torch.bool)
    padded[..., s_k - PADDED_KEYS:] = True
    causal = torch.ones(s_q, s_k, dtype=torch.bool).triu(1)
    return q, k, v, padded, causal


def collect(remote, names=None) -> tuple[dict, dict]:
    """Compute the pictures' data from the student's code through ``remote`` (a
    :class:`~autograder.sandbox.remote.RemoteImpl` or a local implementation with the same access).

    ``names``: the exercises graded (None = all). Returns ``(figures, problems)``:
    figure name -> plot data, and figure name -> why it could not be made (the student's
    error, in the current language). Never raises for a failing submission.
    """
    import torch

    wanted = set(names) if names else None
    figures: dict[str, dict] = {}
    problems: dict[str, str] = {}

    def attempt(figure: str, make: Callable[[], dict]) -> None:
        exercise = FIGURES[figure]
        if (wanted is not None and exercise not in wanted) or (hasattr(remote, "has") and not remote.has(exercise)):
            return
        try:
            figures[figure] = make()
        except AssertionError as exc:   # SubmissionError / Mismatch: the student's failure
            problems[figure] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        except Exception as exc:  # noqa: BLE001 - odd values from the child (plain data) that the drawing code trips on
            problems[figure] = f"{type(exc).__name__}: {exc}"

    def pe():
        got = remote.positional_encoding.sinusoidal_table(*PE_SHAPE)
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != PE_SHAPE:
            raise AssertionError(f"sinusoidal_table{PE_SHAPE} returned {_describe(got)}")
        return {"got": _rows(got), "expected": _rows(formula_table(*PE_SHAPE))}

    q, k, v, padded, causal = attention_examples()

    def attention(mask, blocked):
        def make():
            out = remote.attention.scaled_dot_product_attention(q, k, v, mask)
            weights = out[1] if isinstance(out, (tuple, list)) and len(out) == 2 else None
            shape = (1, ATTENTION_SHAPE[0], ATTENTION_SHAPE[1])
            if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != shape:
                raise AssertionError(f"scaled_dot_product_attention returned weights {_describe(weights)}")
            return {"weights": _rows(weights[0]), "blocked": torch.broadcast_to(blocked, shape[1:]).tolist()}
        return make

    attempt("pe_table", pe)
    attempt("attention_padded", attention(padded, padded[0]))
    attempt("attention_causal", attention(causal, causal))
    return figures, problems


def collect_from_session(remote, names=None, timeout: float = PICTURES_TIMEOUT) -> tuple[dict, dict]:
    """:func:`collect` through the grading session's ``remote`` at the end of its run, before
    its child closes (no second child, no second preparation of the submission). The requests
    count against no exercise's share; together they may take ``timeout`` seconds. Never
    raises: a child that cannot start, or anything else that stops the step, is a picture
    problem (``{"*": why}``), never a failed test."""
    remote.begin_test(None)
    remote.deadline = min(time.monotonic() + timeout, remote.deadline or float("inf"))   # within the submission's
    try:
        remote.reset()   # the last test's handles go
        return collect(remote, names)
    except Exception as exc:  # noqa: BLE001 - a picture step must never fail the grading
        return {}, {"*": f"{type(exc).__name__}: {exc}"[:500]}


def add_to_results(results, figures: dict, problems: dict) -> None:
    """Add collected pictures' data to ``results`` (:class:`autograder.results.model.Results`):
    ``figures`` (figure name -> plot data) and ``figure_problems`` (why a figure is missing)."""
    results.figures = {**(results.figures or {}), **figures}
    if problems:
        results.figure_problems = {**(results.figure_problems or {}), **problems}


def _rows(tensor) -> list:
    return [[round(float(x), 6) for x in row] for row in tensor.detach().double().cpu().tolist()]


def _describe(value) -> str:
    shape = getattr(value, "shape", None)
    return f"shape {list(shape)}" if shape is not None else type(value).__name__


# -- drawing ---------------------------------------------------------------------------------
# fonts covering Korean that matplotlib may find (the HTML reports name the same in their stack)
CJK_FONTS = ("Noto Sans CJK KR", "Noto Sans KR", "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC",
             "Source Han Sans KR", "Source Han Sans K", "NanumGothic", "NanumBarunGothic", "Apple SD Gothic Neo",
             "AppleGothic", "Malgun Gothic", "UnDotum", "Baekmuk Gulim", "WenQuanYi Zen Hei", "Droid Sans Fallback")


def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` matplotlib finds here, or None (Korean would be boxes:
    :func:`autograder.reports.render.picture_labels` then keeps the pictures' words English)."""
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _fonts():
    """An ``rc_context``, ``font.family`` = DejaVu Sans then :func:`cjk_font` (matplotlib falls back
    glyph by glyph between those only, not to ``font.sans-serif``); a kernel keeps its settings."""
    import matplotlib

    family = cjk_font()
    return matplotlib.rc_context({"font.family": ["DejaVu Sans", *([family] if family else [])]})


def _png_uri(fig) -> str:
    plt = _pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _array(data: dict, figure: str, field: str):
    """``data[field]`` as a float64 numpy array (FigureDataError when absent or not numeric)."""
    import numpy as np

    try:
        return np.array(data[field], dtype=np.float64)
    except KeyError:
        raise FigureDataError(f"figure {figure!r} lacks the field {field!r}") from None
    except (TypeError, ValueError) as exc:
        raise FigureDataError(f"figure {figure!r}: field {field!r} is not a numeric array ({exc})") from None


def _matrix(data: dict, figure: str, field: str):
    value = _array(data, figure, field)
    if value.ndim != 2:
        raise FigureDataError(f"figure {figure!r}: field {field!r} must be 2-D, got shape {list(value.shape)}")
    return value


def draw_pe(data: dict, labels: dict) -> str:
    """The student's PE table beside the expected one and their difference (yours - expected,
    so a swap or an off-by-one shows as a pattern; white where they agree). Rows: positions,
    columns: dimensions. FigureDataError when the two tables differ in shape."""
    with _fonts():
        return _png_uri(pe_figure(data, labels))


def pe_figure(data: dict, labels: dict):   # the figure of draw_pe
    plt = _pyplot()
    got, expected = _matrix(data, "pe_table", "got"), _matrix(data, "pe_table", "expected")
    if got.shape != expected.shape:
        raise FigureDataError(f"figure 'pe_table': 'got' has shape {list(got.shape)}, 'expected' {list(expected.shape)}")
    fig, axes = plt.subplots(1, 3, figsize=(10.4, 3.4), constrained_layout=True)
    panels = ((axes[0], got, labels["yours"], 1), (axes[1], expected, labels["expected"], 1),
              (axes[2], got - expected, labels["difference"], 2))
    for ax, table, title, limit in panels:
        image = ax.imshow(table, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
        ax.set_title(title)
        ax.set_xlabel(labels["dimension"])
        ax.set_ylabel(labels["position"])
        if limit == 2:
            fig.colorbar(image, ax=ax, shrink=0.85)
    fig.colorbar(axes[0].images[0], ax=list(axes[:2]), shrink=0.85)
    return fig


def draw_attention(data: dict, figure: str, labels: dict) -> str:
    """Attention weights (query rows, key columns) with the blocked keys hatched: weight on a
    hatched cell means the mask leaked. (Titles go in the report's caption, not the picture.)"""
    with _fonts():
        return _png_uri(attention_figure(data, figure, labels))


def attention_figure(data: dict, figure: str, labels: dict):   # the figure of draw_attention
    plt = _pyplot()
    weights = _matrix(data, figure, "weights")
    blocked = _matrix(data, figure, "blocked").astype(bool)
    if blocked.shape != weights.shape:
        raise FigureDataError(f"figure {figure!r}: 'blocked' has shape {list(blocked.shape)}, "
                              f"'weights' {list(weights.shape)}")
    rows, cols = weights.shape
    # about 0.42 inch per cell, so that the numbers (9 pt, ~14 px at 110 dpi) fit their cells
    fig, ax = plt.subplots(figsize=(max(3.6, 0.42 * cols + 1.4), max(3.3, 0.42 * rows + 0.8)),
                           constrained_layout=True)
    image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    for (row, col) in zip(*blocked.nonzero()):
        ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, hatch="///",
                                   edgecolor="white", linewidth=0))
    for row in range(weights.shape[0]):
        for col in range(weights.shape[1]):
            value = float(weights[row, col])
            leak = bool(blocked[row, col])   # blocked, no weight: blank; weight there: red on white
            if not leak or abs(value) >= 0.005:
                ax.text(col, row, f"{value:.2f}".lstrip("0") if 0 <= value < 1 else f"{value:.1f}", ha="center",
                        va="center", fontsize=9, color="#cf222e" if leak else ("black" if value > 0.6 else "white"),
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1} if leak else None)
    ax.set_xlabel(labels["key"])
    ax.set_ylabel(labels["query"])
    ax.set_xticks(range(weights.shape[1]))
    ax.set_yticks(range(weights.shape[0]))
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def image_grid(rows, padding: int = 2):
    """Images ``rows`` (``[R, N, H, W]``, values clipped to [0, 1]) laid out R rows by N columns
    on a white background with ``padding`` pixels around each: the layout of torchvision's
    ``make_grid(..., nrow=N, padding, pad_value=1)``, in numpy so that a report never imports torch."""
    import numpy as np

    rows = np.clip(np.asarray(rows, dtype=np.float64), 0.0, 1.0)
    n_rows, n_cols, height, width = rows.shape
    grid = np.ones((n_rows * (height + padding) + padding, n_cols * (width + padding) + padding))
    for r in range(n_rows):
        for c in range(n_cols):
            top, left = r * (height + padding) + padding, c * (width + padding) + padding
            grid[top:top + height, left:left + width] = rows[r, c]
    return grid


def draw_reconstructions(data: dict, labels: dict) -> str:
    """Originals (top row) above the reconstructions (bottom row), one grid (:func:`image_grid`)."""
    with _fonts():
        return _png_uri(reconstructions_figure(data, labels))


def reconstructions_figure(data: dict, labels: dict):   # the figure of draw_reconstructions
    plt = _pyplot()
    originals = _array(data, "ae_reconstructions", "originals")
    recons = _array(data, "ae_reconstructions", "reconstructions")
    if originals.ndim != 3 or originals.shape != recons.shape:
        raise FigureDataError("figure 'ae_reconstructions': 'originals' and 'reconstructions' must both be "
                              f"[N, H, W], got {list(originals.shape)} and {list(recons.shape)}")
    grid = image_grid([originals, recons])
    fig, ax = plt.subplots(figsize=(min(1.0 + 0.8 * originals.shape[0], 8.0), 2.3), constrained_layout=True)
    ax.imshow(grid, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    height = originals.shape[1] + 2
    ax.set_yticks([height / 2, height * 1.5], [labels["originals"], labels["reconstructions"]])
    ax.set_xticks([])
    return fig


def draw_loss(data: dict, labels: dict) -> str:
    """The training loss against the epoch (or step), log scale when it spans a decade."""
    with _fonts():
        return _png_uri(loss_figure(data, labels))


def loss_figure(data: dict, labels: dict):
    """The matplotlib figure of :func:`draw_loss`: epochs 1..N on whole-number ticks.

    Raises:
        FigureDataError: ``data["losses"]`` is not a non-empty list of numbers.
    """
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    losses = data.get("losses")
    if not isinstance(losses, list) or not losses or not all(isinstance(x, (int, float)) for x in losses):
        raise FigureDataError("figure 'loss_curve' needs 'losses', a non-empty list of numbers")
    fig, ax = plt.subplots(figsize=(4.6, 2.8), constrained_layout=True)
    xs = list(range(1, len(losses) + 1))
    ax.plot(xs, losses, marker="o" if len(losses) <= 30 else None, color="#1f6feb")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    finite = [x for x in losses if math.isfinite(x) and x > 0]
    if finite and max(finite) / min(finite) > 10:
        ax.set_yscale("log")
    ax.set_xlabel(labels["epoch"])
    ax.set_ylabel(labels["loss"])
    ax.grid(alpha=0.3)
    return fig


def render(figures: dict, labels: dict) -> list[dict]:
    """PNG data URIs for the known figures in ``figures``, in :data:`FIGURES`' order:
    a list of ``{"name", "exercise", "title", "caption", "uri"}``. ``labels`` holds the translated
    axis labels, titles and captions (see :func:`autograder.reports.render.picture_labels`).
    A figure whose data is malformed, or that plotting fails to draw, has ``"error"`` (why), ``"uri"`` empty."""
    drawers = {
        "pe_table": lambda d: draw_pe(d, labels),
        "attention_padded": lambda d: draw_attention(d, "attention_padded", labels),
        "attention_causal": lambda d: draw_attention(d, "attention_causal", labels),
        "ae_reconstructions": lambda d: draw_reconstructions(d, labels),
        "loss_curve": lambda d: draw_loss(d, labels),
    }
    out = []
    for name, exercise in FIGURES.items():
        if name not in figures:
            continue
        entry = {"name": name, "exercise": exercise, "title": labels[name], "caption": labels.get(f"{name}_caption", ""),
                 "uri": ""}
        try:
            entry["uri"] = drawers[name](figures[name])
        except Exception as exc:   # noqa: BLE001 - bad data, or a plotting library missing or broken: the picture only
            entry["error"] = str(exc) if isinstance(exc, FigureDataError) else f"not drawn here ({type(exc).__name__})"
        out.append(entry)
    return out


def draw_histogram(scores: list[float], max_score: float, labels: dict | None = None) -> str:
    """The class's score distribution: a histogram of total scores in bins of 5% of
    ``max_score`` (students per bin); ``labels["score"]``, ``labels["students"]`` name the axes."""
    with _fonts():
        return _png_uri(histogram_figure(scores, max_score, labels))


def histogram_figure(scores: list[float], max_score: float, labels: dict | None = None):   # of draw_histogram
    labels = labels or {"score": "score", "students": "students"}
    plt = _pyplot()
    top = max_score or max(scores, default=1.0) or 1.0
    bins = [top * i / 20 for i in range(21)]
    fig, ax = plt.subplots(figsize=(6.0, 2.6), constrained_layout=True)
    ax.hist(scores, bins=bins, color="#1f6feb", edgecolor="white")
    ax.set_xlim(0, top)
    ax.set_xlabel(labels["score"])
    ax.set_ylabel(labels["students"])
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.grid(axis="y", alpha=0.3)
    return fig
