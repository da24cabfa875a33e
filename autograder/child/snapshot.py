"""The child's module state, all of it: taken before any student code, compared and put back by identity.

A student's module can monkeypatch anything the process has imported: ``torch._VF.dropout``, a
function of ``torch._C._nn``, an internal of ``torch.nn.functional``, a method of ``torch.Tensor``,
an operator packet under ``torch.ops``, the import system's hooks and caches, ``copyreg``'s
dispatch table, ``operator.add``, ``functools.reduce``, a function's ``__code__`` or the cell of a
closure. A list of namespaces to restore always misses one, so :func:`take` walks the whole of it
instead, from every module in ``sys.modules``:

- **namespaces**: every module, and every module object reachable from one through attributes
  (``torch.ops`` and its namespaces), with a copy of its attribute dict;
- **classes** found as an attribute of a namespace or of another class (those whose attributes can
  be set: not the immutable built-in types), with a copy of theirs;
- **functions** found there (directly, or inside a staticmethod, classmethod or property), with
  their code, defaults and the contents of their closure's cells;
- **objects** found there that carry a plain instance ``__dict__`` (an operator packet, a handle),
  with a copy of it;
- **containers**: every ``dict``, ``list`` and ``set`` held by one of the above (``sys.meta_path``,
  ``sys.path_importer_cache``, ``copyreg.dispatch_table``, ``gc.callbacks``, registries, caches),
  with a shallow copy (``sys.modules`` itself is the runner's: :mod:`.state`).

:func:`put_back` compares each with its copy by identity only (keys and values, item by item, at C
speed: no ``__eq__`` runs, which a student's object could answer falsely; ~30 ms idle for torch's
~10,000 dicts, ~3,600 classes and ~3,500 containers: :class:`_Group`) and puts back what changed, in place:
attributes set or deleted (a module attribute that is itself a module, such as a submodule imported
since, is kept), cells set, containers refilled. A function's code and defaults can only change
through their setters, which raise an audit event: this process's own audit hook notes those
functions and only they are set back (reading 21,000 functions' attributes would cost more than the
rest). The walk
costs ~90 ms idle, so the zygote takes it once (:func:`prepare`) and each child re-bases only what
its own set-up changes (:func:`rebase`, :data:`SET_UP`) before any student code runs.

What no walk sees: state held in C (torch's operator registrations and modes, counted by
:mod:`.state`), resource limits and audit hooks (:func:`.state.process_marks`), and the
registrations of a module imported since the walk when a shared container changed meanwhile (it
stays imported, but putting the container back would drop what it registered): :func:`put_back`
reports those, and the parent then replaces the child. Standard library only: this module runs in the child.
"""

from __future__ import annotations

import operator
import sys
import types
from itertools import chain

MAX_DEPTH = 3   # module objects reachable from sys.modules through this many attributes
_IMMUTABLE = 1 << 8   # Py_TPFLAGS_IMMUTABLETYPE: attributes cannot be set
_EMPTY = object()     # an empty closure cell
AUDITED = {"sys.addaudithook": 0}   # events seen by this process's own audit hook (state.leftovers)
_TOUCHED: list = []   # functions whose code or defaults were set (the audit hook notes them; put_back)
# caches that change with every import or traceback: put back without suspicion (IMPORT_CACHES),
# and checked one by one rather than in the whole-list pass, which they would fail every time
IMPORT_CACHES = ("sys.path_importer_cache", "sys.path")
BUSY = IMPORT_CACHES + ("linecache.cache",)
# what a child's own set-up changes after the fork, before any student code (threading's fork handlers, the child's
# package, seccomp, sys.path, the environment); tests/test_child_isolation_attacks.py checks the re-based state
SET_UP = frozenset({"threading", "sys", "os", "posix", "pyseccomp", __name__.split(".")[0]})


class ModuleState:
    """What :func:`take` saw: per kind, the live objects (attribute dicts and ``vars`` views are
    live) and, in the same order, their saved copies."""

    def __init__(self):
        self.dicts: list[dict] = []     # the attribute dicts of modules and objects (live)
        self.dict_copies: list[dict] = []
        self.origins: list[str] = []    # the top-level package each of those was found in
        self.classes: list[type] = []
        self.views: list = []           # vars(cls) of each class (live mappingproxies)
        self.view_copies: list[dict] = []
        self.functions: dict[int, int] = {}   # id(function) -> its index in the three lists below
        self.codes: list = []           # __code__, __defaults__ and __kwdefaults__ of each function
        self.defaults: list = []
        self.kwdefaults: list = []
        self.cells: list = []           # every filled closure cell of those functions
        self.cell_values: list = []
        self.containers: list = []      # (label, container)
        self.container_copies: list = []
        self.modules: set[str] = set()  # the names in sys.modules when taken
        self.groups: dict[str, "_Group"] = {}   # "dicts", "views", "containers": see _Group


def _cell(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


def _namespaces() -> list:
    seen: dict[int, object] = {}
    todo = [m for m in list(sys.modules.values()) if issubclass(type(m), types.ModuleType)]
    for module in todo:
        seen[id(module)] = module
    for _depth in range(MAX_DEPTH):
        found = []
        for module in todo:
            for value in list(getattr(module, "__dict__", {}).values()):
                if issubclass(type(value), types.ModuleType) and id(value) not in seen:
                    seen[id(value)] = value
                    found.append(value)
        todo = found
    return list(seen.values())


def _walk() -> tuple[list, list, list, list]:
    """``(namespaces and objects, classes, functions, [(label, container)])`` reachable now."""
    classes: dict[int, type] = {}
    functions: dict[int, types.FunctionType] = {}
    objects: dict[int, tuple[object, str]] = {}
    containers: dict[int, tuple[str, object]] = {}

    def see(value, label: str) -> None:
        kind = type(value)
        if kind is types.FunctionType:
            functions.setdefault(id(value), value)
        elif issubclass(kind, type):
            if not value.__flags__ & _IMMUTABLE:
                classes.setdefault(id(value), value)
        elif kind in (staticmethod, classmethod):
            see(value.__func__, label)
        elif kind is property:
            for part in (value.fget, value.fset, value.fdel):
                if part is not None:
                    see(part, label)
        elif issubclass(kind, (dict, list, set)):
            if value is not sys.modules:
                containers.setdefault(id(value), (label, value))
        elif not issubclass(kind, types.ModuleType):
            if type(_instance_dict(value)) is dict:
                objects.setdefault(id(value), (value, label))

    spaces = _namespaces()
    for space in spaces:
        name = getattr(space, "__name__", "?")
        for key, value in list(getattr(space, "__dict__", {}).items()):
            see(value, f"{name}.{key}")
    ordered = list(classes.values())
    for cls in ordered:   # classes found in classes are walked too (the list grows as it is read)
        before = len(classes)
        for key, value in list(vars(cls).items()):
            see(value, f"{cls.__qualname__}.{key}")
        ordered.extend(list(classes.values())[before:])
    owners = [(space, getattr(space, "__name__", "?")) for space in spaces] + list(objects.values())
    return owners, ordered, list(functions.values()), list(containers.values())


# ModuleState attribute -> (the function attribute it saves, its getter)
_FUNCTION = {name: (attr, operator.attrgetter(attr)) for name, attr in
             (("codes", "__code__"), ("defaults", "__defaults__"), ("kwdefaults", "__kwdefaults__"))}
_CELL = operator.attrgetter("cell_contents")


def _dicts(owners: list) -> list[tuple[dict, str]]:
    """``(attribute dict, the top-level package it was found in)`` of each ``(owner, label)``."""
    found = ((_instance_dict(owner), str(label).split(".")[0]) for owner, label in owners)
    return [(inner, origin) for inner, origin in found if type(inner) is dict]


def _instance_dict(owner):
    try:
        return object.__getattribute__(owner, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict
        return None


def take() -> ModuleState:
    """Walk the process's module state now (see the module docstring); from now on this process's
    audit hook notes every function whose code or defaults are set (:func:`watch_audit_hooks`)."""
    watch_audit_hooks()
    state = ModuleState()
    spaces, classes, functions, containers = _walk()
    found = _dicts(spaces)
    state.dicts = [d for d, _origin in found]
    state.origins = [origin for _d, origin in found]
    state.dict_copies = [dict(d) for d in state.dicts]
    state.classes = classes
    state.views = [vars(c) for c in classes]
    state.view_copies = [dict(v) for v in state.views]
    state.functions = {id(f): i for i, f in enumerate(functions)}
    for name, (_attr, get) in _FUNCTION.items():
        setattr(state, name, list(map(get, functions)))
    state.cells = [cell for f in functions for cell in (f.__closure__ or ()) if _cell(cell) is not _EMPTY]
    state.cell_values = list(map(_CELL, state.cells))
    state.containers = containers
    state.container_copies = [c.copy() for _label, c in containers]
    state.groups = _groups(state)
    state.modules = set(sys.modules)   # last: reading a lazy module's attributes may import more
    return state


def _identical(now, saved) -> bool:
    """Whether a live dict, ``vars`` view, list or set holds the very objects its copy holds (keys
    and values of a mapping): compared by identity only, at C speed, so that no ``__eq__`` runs (a
    student's object could claim to equal what it replaced, or import modules when asked)."""
    if len(now) != len(saved):
        return False
    if isinstance(saved, set):
        return set(map(id, now)) == set(map(id, saved))
    if not all(map(operator.is_, now, saved)):
        return False
    return not isinstance(saved, dict) or all(map(operator.is_, now.values(), saved.values()))


def _differing(now: list, saved: list, same=_identical) -> list[int]:
    """The indexes where ``now`` and ``saved`` differ under ``same`` (one pass over both first)."""
    if all(map(same, now, saved)):
        return []
    return [i for i, (a, b) in enumerate(zip(now, saved)) if not same(a, b)]


def _values(mapping):
    return mapping.values()


class _Group:
    """How one kind (attribute dicts, class views, containers) is compared: the mappings of
    ``whole`` (indexes) all at once, against their keys and values laid end to end (made in the
    zygote, so that a child never builds them: building them copies its memory page by page), and
    those of ``each`` (a child's own set-up re-bases them; caches that change all the time; lists
    and sets) one by one."""

    def __init__(self, copies: list, whole: list[int]):
        self.whole = whole
        each = set(range(len(copies))) - set(whole)
        self.each = sorted(each)
        mappings = [copies[i] for i in whole]
        self.lengths = list(map(len, mappings))
        self.keys = list(chain.from_iterable(mappings))
        self.values = list(chain.from_iterable(map(_values, mappings)))

    def changed(self, live: list, copies: list) -> list[int]:
        """The indexes of ``live`` that differ from ``copies`` (by identity, :func:`_identical`)."""
        found = [i for i in self.each if not _identical(live[i], copies[i])]
        mappings = [live[i] for i in self.whole]
        if list(map(len, mappings)) != self.lengths or not all(map(operator.is_, chain.from_iterable(mappings), self.keys)) \
                or not all(map(operator.is_, chain.from_iterable(map(_values, mappings)), self.values)):
            found += [i for i in self.whole if not _identical(live[i], copies[i])]
        return sorted(found)


def _set_up_classes(state: ModuleState) -> list[int]:
    """The indexes of the classes of the :data:`SET_UP` packages (a child's own set-up sets their attributes)."""
    return [i for i, c in enumerate(state.classes) if str(getattr(c, "__module__", "")).split(".")[0] in SET_UP]


def _groups(state: ModuleState) -> dict[str, _Group]:
    containers = state.container_copies
    set_up = set(_set_up_classes(state))
    return {"dicts": _Group(state.dict_copies, [i for i, o in enumerate(state.origins) if o not in SET_UP]),
            "views": _Group(state.view_copies, [i for i in range(len(state.view_copies)) if i not in set_up]),
            "containers": _Group(containers, [i for i, (label, _c) in enumerate(state.containers)
                                              if isinstance(containers[i], dict) and label not in BUSY
                                              and label.split(".")[0] not in SET_UP])}


def _cell_values(cells: list) -> list:
    try:
        return list(map(_CELL, cells))
    except ValueError:   # a cell emptied since
        return [_cell(c) for c in cells]


def rebase(state: ModuleState) -> None:
    """Take what a child's own set-up changed since the zygote's walk (:data:`SET_UP`) as the state
    to put back: only those parts are compared (comparing all would copy the zygote's memory page
    by page in each child). A module imported since the walk means a walk of its own."""
    if set(sys.modules) - state.modules:
        state.__dict__.update(take().__dict__)
        return
    for i, origin in enumerate(state.origins):
        if origin in SET_UP and not _identical(state.dicts[i], state.dict_copies[i]):
            state.dict_copies[i] = dict(state.dicts[i])
    for i in _set_up_classes(state):
        if not _identical(state.views[i], state.view_copies[i]):
            state.view_copies[i] = dict(state.views[i])
    for i, (label, container) in enumerate(state.containers):
        if label.split(".")[0] in SET_UP and not _identical(container, state.container_copies[i]):
            state.container_copies[i] = container.copy()


def differences(state: ModuleState) -> list[str]:
    """Where the process now differs from ``state`` (labels; for the kit's own tests)."""
    out = [f"dict of {state.origins[i]}" for i in _differing(state.dicts, state.dict_copies)]
    out += [f"class {state.classes[i].__qualname__}" for i in _differing(state.views, state.view_copies)]
    out += [state.containers[i][0] for i in _differing([c for _l, c in state.containers], state.container_copies)]
    return out


def _put_back_dict(current: dict, saved: dict, setter=None, deleter=None) -> None:
    """``current`` (an attribute dict) as ``saved``: new keys dropped (a module value kept: a
    submodule imported since is bound to its package), changed ones set back."""
    for key in [k for k in current if k not in saved and not issubclass(type(current[k]), types.ModuleType)]:
        try:
            deleter(key) if deleter else current.pop(key, None)
        except (AttributeError, TypeError):
            pass
    for key, value in saved.items():
        if current.get(key, _EMPTY) is not value:
            try:
                setter(key, value) if setter else current.__setitem__(key, value)
            except (AttributeError, TypeError):
                pass


def put_back(state: ModuleState) -> list[str]:
    """Put back every part of ``state`` that changed (see the module docstring). Returns what it
    cannot vouch for: a function it could not set back, and ``"shared registries changed while
    modules were imported"`` when a container other than the import caches changed and a module
    imported since is still there; else []."""
    unsure = []
    for i in state.groups["dicts"].changed(state.dicts, state.dict_copies):
        _put_back_dict(state.dicts[i], state.dict_copies[i])
    for i in state.groups["views"].changed(state.views, state.view_copies):
        cls = state.classes[i]
        _put_back_dict(dict(state.views[i]), state.view_copies[i], lambda k, v: setattr(cls, k, v),
                       lambda k: delattr(cls, k))
    for fn in set(_TOUCHED):   # set through their setters, which the audit hook sees: no comparison
        index = state.functions.get(id(fn))
        if index is None:
            continue
        for name, (attr, _get) in _FUNCTION.items():
            try:
                setattr(fn, attr, getattr(state, name)[index])
            except (AttributeError, TypeError, ValueError):
                unsure = ["a function that cannot be put back"]
    _TOUCHED.clear()
    for i in _differing(_cell_values(state.cells), state.cell_values, operator.is_):
        state.cells[i].cell_contents = state.cell_values[i]
    changed = []
    for i in state.groups["containers"].changed([c for _label, c in state.containers], state.container_copies):
        label, container = state.containers[i]
        saved = state.container_copies[i]
        changed.append(label)
        if isinstance(container, list):
            container[:] = saved
        else:
            container.clear()
            container.update(saved)
    if set(sys.modules) - state.modules and [label for label in changed if label not in IMPORT_CACHES]:
        unsure.append("shared registries changed while modules were imported")
    return unsure


# -- what no walk sees, read at the start and compared (state.leftovers) --------------------------
_FUNCTION_ATTRIBUTES = frozenset(attr for attr, _get in _FUNCTION.values())


def _audit(event: str, args) -> None:
    """This process's audit hook: notes each function whose ``__code__``, ``__defaults__`` or
    ``__kwdefaults__`` is set (the only way to change them: their setters raise this event) and
    counts the audit hooks added after it."""
    if event == "object.__setattr__":
        if len(args) > 1 and args[1] in _FUNCTION_ATTRIBUTES and type(args[0]) is types.FunctionType:
            _TOUCHED.append(args[0])
    elif event in AUDITED:
        AUDITED[event] += 1


_WATCHING: list[bool] = []


def watch_audit_hooks() -> None:
    """Install this process's own audit hook (once): it counts the audit hooks added after it,
    which no one can remove (:func:`.state.process_marks`)."""
    if not _WATCHING:
        sys.addaudithook(_audit)
        _WATCHING.append(True)


_PREPARED: ModuleState | None = None


def prepare() -> None:
    """In the zygote, before it forks children: walk the module state once (:func:`take`), for
    each child to :func:`rebase` instead of walking it again."""
    global _PREPARED
    watch_audit_hooks()
    _PREPARED = take()


_CHILD: list[ModuleState] = []   # this child's state (for the kit's own check, :func:`unexplained`)


def for_this_child() -> ModuleState:
    """The module state a new child puts back: the zygote's walk re-based on this child's set-up,
    or a walk of its own where there was none."""
    global _PREPARED
    watch_audit_hooks()
    state, _PREPARED = (take() if _PREPARED is None else _PREPARED), None
    _CHILD[:] = [state]
    rebase(state)   # after the line above: this module's record of it is part of the state
    return state


def unexplained() -> list[str]:
    """What differs from this child's state before any student code ran (the kit's own tests ask
    a new child: anything here is a set-up change :data:`SET_UP` misses)."""
    return differences(_CHILD[0]) if _CHILD else ["no state taken"]
