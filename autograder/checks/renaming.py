"""The contract's structure under other names: a one-to-one correspondence of a module's
parameters and buffers to the exercise's (:func:`correspond`), so that a test can load its weights
under the student's names and grade the maths; and the renamed attributes, for the one test that
grades the names (:func:`renamed_attributes`).

**The rule** (docs/DESIGN.md, "Renamed attributes"). Both sides are state-dict layouts: the
ordered list of ``(dotted name, shape)`` of ``module.state_dict()`` (registration order) and of the
test's state dict (the reference's order). At each level of the names, from the top:

1. *Same name*: entries whose first name component is the same on both sides are matched there:
   a tensor to a tensor of the same shape, a submodule to a submodule by this rule, recursively.
   Where that fails (shapes differ, nothing corresponds inside), both go to step 2.
2. *Shape and order*: the entries left at this level are grouped into *leaves*, the modules that
   own them directly (``linears.0`` owns ``linears.0.weight``), each with its *signature*, the shapes
   of its tensors in registration order (``nn.Linear(12, 12)``: ``([12, 12], [12])``; a LayerNorm,
   hand-written or not: ``([12], [12])``). Leaves of equal signature are paired in registration
   order, and so are the tensors inside two paired leaves.

Leaves of a signature the exercise does not have at that level are the student's own (an extra
buffer holding ``sqrt(d_model)``, a learnable scale): they are left out and keep their values,
as long as every leaf of the exercise there found its counterpart. A tensor the module holds
under two names is one entry (the student's layout lists it once, :func:`autograder.checks.
weights.layout`).

It refuses (:class:`NoCorrespondence`) when, for some signature, both sides have leaves but not as
many (which goes with which is then a guess), or the student has leaves of a signature the
exercise does not have while some of the exercise's have no counterpart (another structure, not
extra parameters), or, with ``strict``, the exercise has leaves the student lacks. Without
``strict`` those are left out (a missing final norm then shows as a wrong output, as when the
names agree).

Trust: the layout is what the student's child reports; a correspondence only renames the keys of
the grader's own state dict, so a wrong or hostile one can only make the student's output differ.
No points depend on it except through that output and the names test.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from autograder.i18n import _

Layout = Sequence[tuple[str, Sequence[int]]]

#: The attributes by which a composite holds another exercise's module: a renamed attribute under
#: one of them is that exercise's (its own names test counts it), not the composite's.
COMPONENTS = {"self_attn": "multi_head_attention", "cross_attn": "multi_head_attention",
              "feed_forward": "feed_forward", "src_embed": "embedding", "tgt_embed": "embedding",
              "pos_encoding": "positional_encoding", "encoder": "encoder", "decoder": "decoder"}


def layout_of(state: dict) -> list[tuple[str, tuple[int, ...]]]:
    """The layout of a state dict: ``[(name, shape)]`` in its order (values with a ``shape``)."""
    return [(k, tuple(v.shape)) for k, v in state.items()]


class NoCorrespondence(ValueError):
    """No unique correspondence exists; ``str(exc)`` says why (translated, shapes included)."""


class _Entry:
    __slots__ = ("key", "path", "shape")

    def __init__(self, key: str, shape: Sequence[int]):
        self.key, self.path, self.shape = key, tuple(key.split(".")), tuple(int(d) for d in shape)


def correspond(contract: Layout, student: Layout, *, strict: bool = False) -> dict[str, str]:
    """``{contract key: student key}`` by the rule of this module (see there).

    Args:
        contract: the exercise's layout, ``[(name, shape)]`` in the reference's order (a test's
            state dict: ``[(k, v.shape) for k, v in state.items()]``).
        student: the student's module's layout in its registration order.
        strict: every contract entry must have a student counterpart.

    Returns:
        the pairs, every student entry in one (contract entries left out without ``strict``).

    Raises:
        NoCorrespondence: the rule finds no unique correspondence; the message says where.
    """
    return _match([_Entry(k, s) for k, s in contract], [_Entry(k, s) for k, s in student], 0, strict)


def _by_component(entries: list[_Entry], depth: int) -> dict[str, list[_Entry]]:
    groups: dict[str, list[_Entry]] = {}
    for e in entries:
        groups.setdefault(e.path[depth], []).append(e)
    return groups


def _match(contract: list[_Entry], student: list[_Entry], depth: int, strict: bool) -> dict[str, str]:
    pairs: dict[str, str] = {}
    ours, theirs = _by_component(contract, depth), _by_component(student, depth)
    pool_c: list[_Entry] = []
    for name, group in ours.items():
        other = theirs.pop(name, None)
        if other is None:
            pool_c += group
            continue
        tensor = [len(e.path) == depth + 1 for e in group + other]
        if all(tensor) and len(group) == len(other) == 1 and group[0].shape == other[0].shape:
            pairs[group[0].key] = other[0].key
            continue
        if not any(tensor):
            try:
                pairs.update(_match(group, other, depth + 1, strict))
                continue
            except NoCorrespondence:
                pass
        pool_c += group
        theirs[name] = other   # back to the pool, in its place
    pool_s = [e for e in student if e.path[depth] in theirs]
    pairs.update(_by_shape(pool_c, pool_s, strict))
    return pairs


def _leaves(entries: list[_Entry]) -> dict[tuple, list[_Entry]]:
    leaves: dict[tuple, list[_Entry]] = {}
    for e in entries:
        leaves.setdefault(e.path[:-1], []).append(e)
    return leaves


def _signature(leaf: list[_Entry]) -> tuple:
    return tuple(e.shape for e in leaf)


def _shapes(signature: tuple) -> str:
    return " + ".join(str(list(shape)) for shape in signature) or "[]"


def _names(leaves: Iterable[list[_Entry]], limit: int = 4) -> str:
    names = [".".join(leaf[0].path[:-1]) or leaf[0].key for leaf in leaves]
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _by_shape(contract: list[_Entry], student: list[_Entry], strict: bool) -> dict[str, str]:
    groups_c: dict[tuple, list[list[_Entry]]] = {}
    groups_s: dict[tuple, list[list[_Entry]]] = {}
    for leaf in _leaves(contract).values():
        groups_c.setdefault(_signature(leaf), []).append(leaf)
    for leaf in _leaves(student).values():
        groups_s.setdefault(_signature(leaf), []).append(leaf)
    pairs: dict[str, str] = {}
    extras = {signature: theirs for signature, theirs in groups_s.items() if signature not in groups_c}
    if extras and any(signature not in groups_s for signature in groups_c):   # another structure
        signature, theirs = next(iter(extras.items()))
        raise NoCorrespondence(_("yours has {names} ({shapes}), which the exercise has nowhere").format(
            names=_names(theirs), shapes=_shapes(signature)))
    for signature, theirs in groups_s.items():
        ours = groups_c.get(signature, [])
        if not ours:   # the student's own parameters or buffers: left out, their values kept
            continue
        if len(ours) != len(theirs):
            raise NoCorrespondence(_("the exercise has {n} of {shapes} ({ours}), yours has {m} ({theirs})").format(
                n=len(ours), m=len(theirs), shapes=_shapes(signature), ours=_names(ours), theirs=_names(theirs)))
        for leaf_c, leaf_s in zip(ours, theirs):
            pairs.update((c.key, s.key) for c, s in zip(leaf_c, leaf_s))
    if strict:
        for signature, ours in groups_c.items():
            if signature not in groups_s:
                raise NoCorrespondence(_("yours has nothing for {names} ({shapes})").format(
                    names=_names(ours), shapes=_shapes(signature)))
    return pairs


def renamed_attributes(pairs: dict[str, str], exercise: str | None = None) -> list[str]:
    """The renamed attributes of ``pairs`` (from :func:`correspond`), as ``"yours -> exercise's"``
    in order, each once (``linears.0 -> q_proj``, ``sublayer.0.norm.a_2 -> norm1.weight``): the
    part of the two names between what they share at the start and at the end, with the owning
    attribute before a lone tensor name (``norm.a_2 -> norm.weight``). ``exercise`` given: only
    those that exercise owns (a rename under ``self_attn`` is ``multi_head_attention``'s, see
    :data:`COMPONENTS`; the exercise's own otherwise)."""
    found: list[str] = []
    for ours, theirs in pairs.items():
        if ours == theirs:
            continue
        a, b = ours.split("."), theirs.split(".")
        head = 0
        while head < min(len(a), len(b)) - 1 and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(len(a), len(b)) - head - 1 and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        if exercise is not None and _owner(a[:head], exercise) != exercise:
            continue
        mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
        if head and len(mid_a) == len(mid_b) == 1 and not tail:   # a lone tensor name: say whose
            mid_a, mid_b = a[head - 1:head] + mid_a, b[head - 1:head] + mid_b
        text = f"{'.'.join(mid_b)} -> {'.'.join(mid_a)}"
        if text not in found:
            found.append(text)
    return found


def _owner(prefix: list[str], exercise: str) -> str:
    """The exercise that owns the attribute at ``prefix`` of ``exercise``'s module."""
    owner = exercise
    for name in prefix:
        owner = COMPONENTS.get(name, owner)
    return owner
