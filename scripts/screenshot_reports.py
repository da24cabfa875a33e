"""Screenshot feedback.html and summary.html in headless Chromium, at desktop and phone width.

    python scripts/screenshot_reports.py OUT_DIR [--report FILE ...] [--chromium PATH]

Without ``--report`` it renders sample reports first (from the figures of the reference
solutions and a demo results dict with a failing, a hidden and a crashed test, in English and
Korean) into OUT_DIR, then writes ``<name>-desktop.png`` (1280 px wide) and
``<name>-phone.png`` (390 px) beside them. Needs Debian's ``chromium`` package.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WIDTHS = {"desktop": (1280, 2400), "phone": (390, 2600)}


def screenshot(chromium: str, page: Path, png: Path, width: int, height: int) -> None:
    """One headless screenshot of ``page`` (a fresh profile, no network features)."""
    with tempfile.TemporaryDirectory(prefix="tkit-chromium-") as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--no-first-run", f"--user-data-dir={profile}", "--hide-scrollbars",
                        f"--window-size={width},{height}", f"--screenshot={png}", page.resolve().as_uri()],
                       check=True, capture_output=True, timeout=120)


def sample_reports(out: Path) -> list[Path]:
    """Render sample feedback (en, ko) and summary pages into ``out``."""
    from autograder import paths
    from autograder.mistakes import implementations
    from autograder.reports import pictures, render, summary
    from autograder.results.model import error_results

    figures, _ = pictures.collect(implementations.reference())
    good = _demo_results(figures, failing=False)
    bad = _demo_results(figures, failing=True)
    crashed = _demo_results({}, failing=True, crashed=True)
    written = []
    for name, results, lang in (("feedback-en", bad, "en"), ("feedback-ko", bad, "ko"),
                                ("feedback-crashed", crashed, "en")):
        page = out / f"{name}.html"
        page.write_text(render.render_feedback(results, "html", student="student-042", lang=lang), encoding="utf-8")
        written.append(page)
    class_results = {f"s{i:03d}": _demo_results({}, failing=i % 3 == 0, seconds=3 + i) for i in range(12)}
    class_results["s900"] = crashed
    class_results["s901"] = error_results("s901.zip: not a valid zip file", "s901.zip")
    class_results["s000"] = good
    for lang in ("en", "ko"):   # the notebook self-check's inline output, in a Jupyter-like page
        page = out / f"notebook-check-{lang}.html"
        page.write_text(notebook_page(bad, lang), encoding="utf-8")
        written.append(page)
    for lang in ("en", "ko"):
        page = out / f"summary-{lang}.html"
        page.write_text(summary.render_summary(class_results, lang=lang), encoding="utf-8")
        written.append(page)
    del paths
    return written


def notebook_page(results: dict, lang: str) -> str:
    """``tkit.check(...)``'s HTML output (:meth:`autograder.notebook.report.CheckReport._repr_html_`)
    inside an output area styled like JupyterLab's (its own font and width), so the scoped styles
    are seen where they will be."""
    from autograder.notebook.report import CheckReport
    from autograder.results.model import as_results

    report = CheckReport("positional_encoding", results=as_results(results), lang=lang,
                         notes=["demo: the kernel runs another sinusoidal_table than the saved notebook"])
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body { font: 13px system-ui; margin: 0; "
            "background: #fff; } .cell { margin: 8px 8px 8px 72px; max-width: 1000px; } .in { background: #f7f7f7; "
            "border: 1px solid #cfcfcf; padding: 6px; font-family: monospace; } h1 { font-size: 26px; }</style></head>"
            "<body><div class='cell'><h1>Notebook</h1><div class='in'>tkit.check(\"positional_encoding\")</div>"
            f"<div class='out'>{report._repr_html_()}</div></div></body></html>")


def _demo_results(figures: dict, failing: bool, crashed: bool = False, seconds: float = 4.0) -> dict:
    """A results dict shaped like the plugin's (three exercises, one hidden test)."""
    def test(exercise, name, points, ok, output="", hidden=False, **extra):
        return {"name": f"{exercise}: {name}", "score": points if ok else 0.0, "max_score": points,
                "status": "passed" if ok else "failed", "output": output,
                "visibility": "after_published" if hidden else "visible",
                "tags": [exercise, "hidden" if hidden else "public"], "extra_data": {"nodeid": name, **extra}}

    crash = "the submission's process was killed by signal SIGSEGV while running positional_encoding.py"
    mismatch = ("sinusoidal_table(50, 16) has wrong values at 400 of 800 positions (first at (0, 0), where you "
                "returned 1), largest difference 1\nLikely mistake: sin and cos are swapped: even columns 2i take "
                "the sine, odd columns 2i+1 the cosine [pe_sin_cos_swapped]")
    tests = [
        test("positional_encoding", "the table matches the formula", 3, not failing,
             crash if crashed else (mismatch if failing else ""), **({"mistake": "pe_sin_cos_swapped"}
                                                                     if failing and not crashed else {})),
        test("positional_encoding", "odd d_model raises ValueError", 1, not crashed,
             crash if crashed else ""),
        test("positional_encoding", "random shapes match the reference", 4, not failing, "secret", hidden=True,
             **({"failure": "crash"} if crashed else {"mistake": "pe_sin_cos_swapped"} if failing else {})),
        test("masks", "the causal mask blocks the future", 4, not crashed, crash if crashed else ""),
        test("attention", "a fully masked row gives zeros, not NaN", 5, True),
    ]
    per = {}
    for t in tests:
        e = per.setdefault(t["tags"][0], {"score": 0.0, "max_score": 0.0})
        e["score"] += t["score"]
        e["max_score"] += t["max_score"]
    return {"score": sum(t["score"] for t in tests), "execution_time": seconds, "tests": tests,
            "extra_data": {"kit_version": "0.1.0", "seed": 1234, "max_score": 17.0, "exercises": per,
                           "figures": figures}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--report", type=Path, action="append", default=[], help="an HTML report to screenshot")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--height", type=int, default=0, help="window height in px (default 2400 desktop, 2600 phone)")
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("chromium not found: apt-get install -y chromium (Debian), or pass --chromium PATH")
    args.out.mkdir(parents=True, exist_ok=True)
    pages = args.report or sample_reports(args.out)
    stems = [page.stem for page in pages]
    for page in pages:
        # feedback.html of several students: name each picture after the student's folder
        name = f"{page.parent.name}-{page.stem}" if stems.count(page.stem) > 1 else page.stem
        for label, (width, height) in WIDTHS.items():
            height = args.height or height
            png = args.out / f"{name}-{label}.png"
            screenshot(args.chromium, page, png, width, height)
            print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
