"""The functions the contract forbids, named by what the student's code called.

exercises/README.md: "Students may not use ``nn.MultiheadAttention``, ``F.multi_head_attention_forward``,
``F.scaled_dot_product_attention`` or any ``nn.Transformer*`` class in any exercise". The child
records each use its student code makes of them (:mod:`autograder.child.forbidden`: the api and the
submission module that called it); :class:`autograder.sandbox.remote.RemoteImpl` keeps the records
of the running test. :func:`check` turns a use *by the running exercise's own file* into the test's
failure (kind ``forbidden``, one message per api and file, shown once in a report by
:mod:`autograder.reports.causes`), naming the mistake the values show where a catalog mutant
reproduces them (``mha_sdpa_mask_inverted``: the kit's mask handed to SDPA, which reads True as
"attend"), else the forbidden api itself (:data:`autograder.mistakes.diagnosis.FORBIDDEN`). A use
from a component's file is that component's exercise's failure, not the composite's.
"""

from __future__ import annotations

from autograder.context import current
from autograder.i18n import _
from autograder.mistakes import families
from autograder.sandbox.errors import SubmissionError

#: what the child reports -> the id of the forbidden use (diagnosis.FORBIDDEN)
IDS = {"F.scaled_dot_product_attention": "forbidden_sdpa",
       "F.multi_head_attention_forward": "forbidden_nn_multihead_attention",
       "nn.MultiheadAttention": "forbidden_nn_multihead_attention"}
TRANSFORMER_ID = "forbidden_nn_transformer"   # every nn.Transformer* class
#: the mistakes of a forbidden function's use itself, named instead of the function where the values show them
OF_THE_USE = frozenset(v.id for v in families.FORBIDDEN_MASK)


def uses(student, exercise: str | None = None) -> list[str]:
    """The forbidden apis the running test's student code reached from ``exercise``'s own file
    (default: the running test's exercise), in the order first seen."""
    ctx = current(required=False)
    exercise = exercise or (ctx.exercise if ctx is not None else None)
    found = []
    for api, module in getattr(student, "forbidden", ()) or ():
        if module == exercise and api not in found:
            found.append(api)
    return found


def check(student, mistake=None) -> None:
    """Raise the ``forbidden`` failure when the running test's exercise's own file reached a
    forbidden function or class, naming ``mistake`` (what the output's values show) where it is a
    mistake of that use (:data:`OF_THE_USE`), else the forbidden api (a fused projection named on
    ``nn.MultiheadAttention``'s weights is the class's, not the student's). Returns quietly otherwise."""
    found = uses(student)
    if not found:
        return
    ctx = current(required=False)
    exercise = ctx.exercise if ctx is not None else ""
    first = found[0]
    mistake_id = getattr(mistake, "id", None)
    if mistake_id not in OF_THE_USE:   # another mistake the values show follows from the forbidden use
        mistake_id = TRANSFORMER_ID if first.startswith("nn.Transformer") else IDS.get(first, "forbidden_sdpa")
    text = _("your {file} uses {apis}, which exercises/README.md forbids").format(
        file=f"{exercise}.py", apis=", ".join(found))
    text += "\n" + _("The contract: \"Students may not use nn.MultiheadAttention, F.multi_head_attention_forward, "
                     "F.scaled_dot_product_attention or any nn.Transformer* class in any exercise.\" Write the "
                     "computation yourself (the kit's attention, masks and multi-head attention exercises); every "
                     "test whose code reaches them fails until then.")
    raise SubmissionError("forbidden", text, mistake=mistake_id)
