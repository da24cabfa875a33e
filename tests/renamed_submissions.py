"""Submissions with the contract's structure under other attribute names, written the way public
tutorials write them (The Annotated Transformer's ``lut``, ``linears``, ``w_1``/``w_2``, a hand-written
``LayerNorm`` with ``a_2``/``b_2`` inside ``sublayer[i].norm``), for the kit's tests of
:mod:`autograder.checks.renaming` and for the CHANGELOG's figures
(``python tests/renamed_submissions.py OUT``: one folder per case).

Each case is the reference solutions with some files rewritten by exact text replacements (each
must match), so the maths is the reference's unless the case adds a mistake.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_LUT = (("self.embedding", "self.lut"),)
_LINEARS = (
    ("        self.q_proj = nn.Linear(d_model, d_model, bias=bias)\n"
     "        self.k_proj = nn.Linear(d_model, d_model, bias=bias)\n"
     "        self.v_proj = nn.Linear(d_model, d_model, bias=bias)\n"
     "        self.out_proj = nn.Linear(d_model, d_model, bias=bias)\n",
     "        self.linears = nn.ModuleList([nn.Linear(d_model, d_model, bias=bias) for _ in range(4)])\n"),
    ("self.q_proj(", "self.linears[0]("), ("self.k_proj(", "self.linears[1]("),
    ("self.v_proj(", "self.linears[2]("), ("self.out_proj(", "self.linears[3]("),
)
_W12 = (("self.linear1", "self.w_1"), ("self.linear2", "self.w_2"))

# A hand-written LayerNorm as The Annotated Transformer writes it (a_2, b_2), inside a "sublayer"
# holder; CORRECT: the biased variance with eps inside the root, as nn.LayerNorm.
_ANNOTATED_NORM = '''

class LayerNorm(nn.Module):
    """Layer normalisation written by hand (The Annotated Transformer's names)."""

    def __init__(self, features, eps=1e-5):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2


class SublayerConnection(nn.Module):
    """Holds the norm of one sub-layer (The Annotated Transformer's ``sublayer[i].norm``)."""

    def __init__(self, size):
        super().__init__()
        self.norm = LayerNorm(size)
'''
# The Annotated Transformer's own LayerNorm: the unbiased standard deviation, eps added to it.
_UNBIASED = ("        var = x.var(-1, keepdim=True, unbiased=False)\n"
             "        return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2\n",
             "        std = x.std(-1, keepdim=True)\n"
             "        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2\n")


def _sublayer_norms(count: int) -> tuple:
    lines = "".join(f"        self.norm{i} = nn.LayerNorm(d_model)\n" for i in range(1, count + 1))
    held = (f"        self.sublayer = nn.ModuleList([SublayerConnection(d_model) for _ in range({count})])\n")
    return ((lines, held),
            *((f"self.norm{i}(", f"self.sublayer[{i - 1}].norm(") for i in range(1, count + 1)),
            ("self.norm = nn.LayerNorm(d_model) if norm_first else None",
             "self.norm = LayerNorm(d_model) if norm_first else None"),
            ("\n\nclass ", _ANNOTATED_NORM + "\n\nclass ", 1))


#: case -> {file: replacements}; a replacement is (old, new) or (old, new, count).
CASES: dict[str, dict[str, tuple]] = {
    "embedding_lut": {"embedding": _LUT},
    "embedding_lut_no_scale": {"embedding": _LUT + (("return self.lut(token_ids) * math.sqrt(self.d_model)",
                                                     "return self.lut(token_ids)"),)},
    "mha_linears": {"multi_head_attention": _LINEARS},
    "ffn_w12": {"feed_forward": _W12},
    "ffn_w12_gelu": {"feed_forward": _W12 + (("F.relu(", "F.gelu("),)},
    "encoder_annotated_norm": {"encoder": _sublayer_norms(2)},
    "encoder_annotated_norm_unbiased": {"encoder": _sublayer_norms(2) + (_UNBIASED,)},
    "decoder_annotated_norm": {"decoder": _sublayer_norms(3)},
    # every component renamed at once: the composites' own files use the contract's names
    "all_renamed": {"embedding": _LUT, "multi_head_attention": _LINEARS, "feed_forward": _W12,
                    "encoder": _sublayer_norms(2), "decoder": _sublayer_norms(3)},
}


def patched(source: str, replacements: tuple) -> str:
    """``source`` with each replacement applied; ValueError when one does not match."""
    for old, new, *count in replacements:
        if old not in source:
            raise ValueError(f"no {old!r} in the source")
        source = source.replace(old, new, *count)
    return source


def build(folder: Path, case: str, mutant: str | None = None) -> Path:
    """A submission folder for ``case``: the reference solutions, patched; with ``mutant`` (a
    catalog id, instructor kit), that mistake's replacements applied on top of the patched file
    (the mistake in renamed code). Returns ``folder``."""
    shutil.copytree(REPO / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name, replacements in CASES[case].items():
        path = folder / f"{name}.py"
        path.write_text(patched(path.read_text(encoding="utf-8"), replacements), encoding="utf-8")
    if mutant is not None:
        from autograder.mistakes import catalog

        found = catalog.by_id(mutant)
        path = folder / f"{found.exercise}.py"
        renames = dict(r[:2] for r in CASES[case].get(found.exercise, ()))
        replacements = []
        for old, new in found.replace:   # the mistake written with the case's names
            for contract, theirs in renames.items():
                old, new = old.replace(contract, theirs), new.replace(contract, theirs)
            replacements.append((old, new))
        path.write_text(patched(path.read_text(encoding="utf-8"), tuple(replacements)), encoding="utf-8")
    return folder


if __name__ == "__main__":
    out = Path(sys.argv[1])
    for name in CASES:
        build(out / name, name)
        print(out / name)
