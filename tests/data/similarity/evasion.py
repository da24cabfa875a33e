"""The structural matcher's evaluation set: per exercise, one student's correct
``copied`` module, the issue's three rewrites of it (``api``: equivalent API calls, keyword
arguments, ``%``-formatting, a ``setattr`` loop; ``three_address``: one operation per statement
with dead statements between; ``inlined``: helpers inlined, ``unflatten``/``flatten``, tuple
unpacking) and correct solutions written independently (``ind_*``). Each module is the starter
stub with its TODOs filled in, the way a student edits it; module-level helpers go at the end.

``modules()`` -> ``{exercise: {name: code}}``; names ``copied``, ``copy_<rewrite>``, ``ind_<style>``.
Every module here is checked against the reference on random inputs by
``benchmarks/compare_structural.py --check``.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_set, encoder_set, mha_set, pe_set  # noqa: E401,E402 - the sets beside this file

REPO = Path(__file__).resolve().parents[3]
SETS = {"positional_encoding": pe_set, "attention": attention_set, "multi_head_attention": mha_set,
        "encoder": encoder_set}
REWRITES = ("api", "three_address", "inlined")


def filled(exercise: str, bodies: dict[str, str], helpers: str = "") -> str:
    """The stub of ``exercise`` with each function's TODO replaced by its body, plus ``helpers``."""
    code = (REPO / "exercises" / f"{exercise}.py").read_text(encoding="utf-8")
    for func, body in bodies.items():
        line = re.search(rf"^( +)raise NotImplementedError\(\"{exercise}: {re.escape(func)} .*$", code, re.M)
        assert line, (exercise, func)
        code = code.replace(line.group(0), textwrap.indent(textwrap.dedent(body).strip(), line.group(1)))
    if "math." in code and "import math" not in code:  # the student adds the import they use
        code = code.replace("import torch\n", "import math\n\nimport torch\n", 1)
    return code + (("\n" + helpers) if helpers else "")


def modules() -> dict[str, dict[str, str]]:
    out = {}
    for exercise, data in SETS.items():
        mods = {"copied": filled(exercise, data.COPIED, data.HELPERS.get("copied", ""))}
        for kind in REWRITES:
            mods[f"copy_{kind}"] = filled(exercise, data.REWRITES[kind], data.HELPERS.get(kind, ""))
        for style, bodies in data.INDEPENDENT.items():
            mods[f"ind_{style}"] = filled(exercise, bodies)
        out[exercise] = mods
    return out
