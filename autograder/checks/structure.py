"""A module whose parameters do not take the test's weights, explained once: which attributes, what the
contract expects there, and the known mistake or convention the structure shows.

:func:`autograder.checks.weights.load` loads a test's state dict (the contract's names and shapes) into
a student's module, under the student's own names where the structure is the same
(:mod:`.renaming`). When it cannot, PyTorch's own error ("Unexpected key(s) in state_dict:
q_proj.bias", "size mismatch for linear1.weight") or "no correspondence" says little; :func:`explain`
compares the two layouts (``[(name, shape)]``, see :func:`.renaming.layout_of`) and says what differs,
in this order:

1. *Missing biases*: a linear layer of the student's has its weight but no bias where the contract
   has one (``q_proj``, ``k_proj``, ``v_proj`` built with ``bias=False``, the GPT-style ``qkv_bias``).
2. *Transposed weights*: weights of shape ``[d_in, d_out]``, the transpose of ``nn.Linear``'s
   ``[d_out, d_in]`` (the einsum and JAX/Flax layout), under the contract's names or as bare
   parameters: the multiset of the student's matrix shapes is the contract's with each reversed.
   A square weight cannot show this by its shape; its values do (the catalog's
   ``*_weights_transposed`` mutants).
3. *Fused projections*: one ``[3 * d_model, d_model]`` matrix for q, k and v.
4. Otherwise the student's attributes the contract does not name, or the contract's the module lacks.

The first line of the message names the module's class and the finding without sizes, so a report
shows it once however many tests (of several sizes) meet it (:mod:`autograder.reports.causes`); the
sizes follow on the next lines. The named mistake is an id of :mod:`autograder.mistakes.families` or
of the catalog, shared by both editions.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from autograder.checks.renaming import COMPONENTS
from autograder.i18n import _

Layout = Sequence[tuple[str, Sequence[int]]]

#: the mistake each finding shows, by the exercise that owns the attribute
WITHOUT_BIAS = {"multi_head_attention": "mha_projections_without_bias"}
TRANSPOSED = {"multi_head_attention": "mha_weights_transposed", "feed_forward": "ffn_weights_transposed"}
FUSED = {"multi_head_attention": "mha_fused_qkv"}


def _owner(name: str, exercise: str | None) -> str | None:
    """The exercise that owns attribute ``name`` of ``exercise``'s module (``self_attn.q_proj.bias`` of
    an encoder is multi-head attention's)."""
    owner = exercise
    for part in name.split(".")[:-1]:
        owner = COMPONENTS.get(part, owner)
    return owner


def _listed(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _shapes(layout: Layout, keys=None) -> str:
    return ", ".join(f"{k} {list(s)}" for k, s in layout if keys is None or k in keys)


def _missing_biases(ours: dict, theirs: dict) -> list[str]:
    """The layers (``q_proj``) whose weight the student has, with the contract's shape, but not the bias."""
    found = []
    for key in ours:
        if key.endswith(".bias") and key not in theirs:
            layer = key[: -len(".bias")]
            if tuple(theirs.get(layer + ".weight", ())) == tuple(ours.get(layer + ".weight", ())):
                found.append(layer)
    return found


def _transposed(ours: dict, theirs: dict) -> list[str]:
    """The student's matrices stored ``[d_in, d_out]`` (see the module docstring), or []: under the
    contract's names with the shape reversed; else, in registration order, the contract's matrix
    shapes each reversed (and not as they are), or a matrix whose bias (the 1-D tensor after it) is as
    long as its second axis."""
    same_name = [k for k, s in theirs.items() if len(s) == 2 and s[0] != s[1] and k in ours
                 and tuple(ours[k]) == (s[1], s[0])]
    if same_name:
        return same_name
    mine = [k for k, s in theirs.items() if len(s) == 2]
    want = [s for s in ours.values() if len(s) == 2]
    got = [theirs[k] for k in mine]
    if mine and got != want and [(s[1], s[0]) for s in got] == want:
        return mine
    keys = list(theirs)
    by_bias = [k for i, k in enumerate(keys[:-1]) if len(theirs[k]) == 2 and theirs[k][0] != theirs[k][1]
               and len(theirs[keys[i + 1]]) == 1 and theirs[keys[i + 1]][0] == theirs[k][1]]
    return by_bias if by_bias and len(by_bias) == len(mine) else []


def _fused(ours: dict, theirs: dict) -> list[str]:
    """The student's ``[3 d, d]`` matrices where the contract has ``q_proj.weight`` ``[d, d]``."""
    widths = {tuple(s)[1] for k, s in ours.items() if k.endswith("q_proj.weight")}
    return [k for k, s in theirs.items() if len(s) == 2 and s[1] in widths and s[0] == 3 * s[1]]


def explain(contract: Layout, student: Layout, *, cls: str, exercise: str | None) -> tuple[str, str | None]:
    """``(message, mistake id or None)`` for a student's module of class ``cls`` whose layout
    ``student`` does not take the state of layout ``contract`` (see the module docstring)."""
    ours, theirs = {k: tuple(s) for k, s in contract}, {k: tuple(s) for k, s in student}
    mistake, finding, keys = None, "", None
    biases = _missing_biases(ours, theirs)
    transposed = _transposed(ours, theirs)
    fused = _fused(ours, theirs)
    if biases:
        finding = _("{names} have no bias, but the exercise's layers have one here (nn.Linear with "
                    "bias=True)").format(names=_listed(biases))
        mistake = _common(WITHOUT_BIAS, biases, exercise)
        keys = {b + ".weight" for b in biases} | {b + ".bias" for b in biases}
    elif transposed:
        finding = _("{names} hold [d_in, d_out] weights applied as x @ W, the transpose of nn.Linear's weight "
                    "[d_out, d_in] (x @ W.T + b)").format(names=_listed(transposed))
        mistake = _common(TRANSPOSED, transposed, exercise) or TRANSPOSED.get(exercise or "")
    elif fused:
        finding = _("{names} is one fused [3 * d_model, d_model] projection where the exercise has q_proj, k_proj "
                    "and v_proj").format(names=_listed(fused))
        mistake = _common(FUSED, fused, exercise)
    else:
        extra, lacking = [k for k in theirs if k not in ours], [k for k in ours if k not in theirs]
        shapes = set(ours.values())
        extra = [k for k in extra if theirs[k] not in shapes] or extra   # no counterpart of any name first
        finding = (_("{names} do not correspond to the exercise's parameters").format(names=_listed(extra)) if extra
                   else _("it has nothing for the exercise's {names}").format(names=_listed(lacking)))
    lines = [f"{cls}: {finding}",   # the class name (code), then the translated finding
             _("Yours: {yours}").format(yours=_shapes(student, keys) or "-"),
             _("The exercise's: {ours}").format(ours=_shapes(contract, keys) or "-"),
             _("Every test that loads given weights into {cls} fails until its parameters have the names and shapes "
               "of exercises/README.md (or the same structure under other names); a property test that needs no "
               "given weights runs on your module's own weights.").format(cls=cls)]
    return "\n".join(lines), mistake


def _common(table: dict, names: list[str], exercise: str | None) -> str | None:
    """``table``'s mistake of the one exercise owning every attribute of ``names``, or None."""
    owners = {_owner(name if "." in name else name + ".weight", exercise) for name in names}
    return table.get(owners.pop()) if len(owners) == 1 else None
