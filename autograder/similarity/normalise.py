"""A module's computation as a normalised expression graph: what :mod:`.structural` fingerprints.

Each function the exercise asks for (the stub's names; without a stub, those the module never
calls) is evaluated symbolically, statement by statement, on placeholders for its parameters.
Every local variable is replaced by the expression it holds, so only what reaches a *sink*
counts: a ``return``, a ``raise`` (with the condition that guards it), a stored attribute of
``self``, or a call that changes state (``register_buffer``, ``x.add_(...)``, ``list.append``).
What this sees through, by construction:

* three-address form, temporaries, reordered and dead statements: variables are substituted away,
  and a value no sink reads is never visited;
* helpers: a call to a function or method of the same module (a static method of one of its
  classes, a lambda bound to a local name) is inlined, arguments bound to parameters by position
  or keyword, ``self`` passed on; tuple unpacking binds element-wise; a loop over a literal tuple
  is unrolled, so ``setattr(self, f"{n}_proj", ...)`` in a loop is four attribute stores;
  ``self.x`` reads the kind of value ``__init__`` stored there (``Linear``, a layout...), so a
  difference inside that value stays in ``__init__``'s features (attribute names never count);
* equivalent calls: ``torch.f(x)``, ``x.f()`` and ``F.f(x)`` are one operation ``f``; arguments
  are an unordered multiset (keyword or positional, any order); every layout operation
  (``view``, ``reshape``, ``flatten``, ``unflatten``, ``transpose``, ``permute``, ``chunk``, ``split``,
  ``unbind``, ``stack``, ``cat``, indexing, slice assignment into a ``zeros`` buffer ...) is one
  node ``layout`` over the multiset of the non-layout values it moves; casts (``.to``, ``.float()``,
  ``type_as``, ``contiguous``, ``tuple(...)``) vanish; ``a - b`` is ``a + (-b)``, ``a / b`` is
  ``a * (1/b)``, ``x ** 0.5`` is ``sqrt(x)``; ``+ * & |`` are commutative and associative;
  ``x.shape[i]``, ``x.size(i)`` and an unpacked shape are one ``size(x)``; ``x.dim()``, ``x.ndim``,
  ``len(x.shape)`` one ``ndim(x)``; conditions are put in one form (``not``, De Morgan, ``>`` as
  ``<``, ``<=`` as ``<``); f-strings, ``%`` and ``str.format`` are one ``format`` node of their
  values (the text never counts, as copydetect's ``S``); constants count by type only.

Nodes are 64-bit blake2b hashes of ``(label, children hashes)``, stable across processes.

Bounded on hostile input: a module that does not parse (syntax error, nesting the parser refuses
with ``RecursionError`` or ``MemoryError``) gives no graph; expressions deeper than
:data:`.expressions.MAX_DEPTH` become one opaque node; a module that needs more than :data:`MAX_WORK` units of work
(inlining and unrolling included) stops with :class:`TooComplex`.
"""

from __future__ import annotations

import ast
from hashlib import blake2b

from autograder.similarity.expressions import MUTATORS, Expressions

MAX_WORK = 200_000      # work units per module: each statement and expression evaluated, node made and child held
MAX_UNROLL = 16         # a loop over a literal of at most this many items is unrolled


class TooComplex(RuntimeError):
    """The module needed more than :data:`MAX_WORK` units of work."""


class Graph:
    """The interned nodes of one module: ``label[h]``, ``children[h]`` per node hash ``h``, and the
    ``sinks`` (node hashes) its entry points reach."""

    def __init__(self):
        self.label: dict[int, str] = {}
        self.children: dict[int, tuple[int, ...]] = {}
        self.sinks: list[int] = []
        self.made = 0

    def tick(self, units: int = 1) -> None:
        """Count ``units`` of work; raises :class:`TooComplex` past :data:`MAX_WORK`."""
        self.made += units
        if self.made > MAX_WORK:
            raise TooComplex(f"more than {MAX_WORK} units of work")

    def node(self, label: str, *children: int, unordered: bool = False) -> int:
        self.tick(1 + len(children))
        kids = tuple(sorted(children)) if unordered else tuple(children)
        digest = blake2b(label.encode("utf-8", "surrogatepass"), digest_size=8)
        for kid in kids:
            digest.update(kid.to_bytes(8, "little"))
        h = int.from_bytes(digest.digest(), "little")
        self.label[h], self.children[h] = label, kids
        return h


class _Frame:
    """One function being evaluated: its variables (``env``), the constants known by value
    (``consts``: loop variables of an unrolled loop), the guard conditions around the current
    statement and the values it returned."""

    def __init__(self, env: dict, consts: dict, depth: int):
        self.env, self.consts, self.depth = env, consts, depth
        self.guards: list[int] = []
        self.returns: list[int] = []


class Evaluator(Expressions):
    """Evaluates one parsed module's entry points into a :class:`Graph` (see the module's text)."""

    def __init__(self, tree: ast.Module, entries: set[str] | None):
        self.g = Graph()
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, dict[str, ast.FunctionDef]] = {}
        self.aliases: dict[str, str] = {}
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = {s.name: s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for a in stmt.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name.split(".")[-1]
        self.entries = entries
        self.attrs: dict[str, int] = {}
        self.stack: list[str] = []

    # -- entry points ------------------------------------------------------------------------
    def run(self) -> Graph:
        called = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in self._calls()}
        for name, func in list(self.functions.items()):
            if self._entry(name, called):
                self._evaluate(func, name, None)
        for cname, methods in self.classes.items():
            self.attrs = {}
            order = sorted(methods, key=lambda m: m != "__init__")
            for m in order:
                if self._entry(f"{cname}.{m}", called, m):
                    self._evaluate(methods[m], f"{cname}.{m}", cname)
        return self.g

    def _calls(self):
        for fn in [*self.functions.values(), *(m for ms in self.classes.values() for m in ms.values())]:
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
                    yield n

    def _entry(self, qualname: str, called: set, short: str | None = None) -> bool:
        if self.entries is not None:
            return qualname in self.entries
        return (short or qualname) not in called or short == "__init__"

    def _evaluate(self, func, qualname: str, cls: str | None) -> None:
        params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
        env = {}
        for i, p in enumerate(params):
            env[p] = self.g.node("self") if (cls and i == 0) else self.g.node(f"P{i}")
        self.stack.append(qualname)
        frame = _Frame(env, {}, 0)
        self._block(func.body, frame, cls)
        self.stack.pop()
        for r in frame.returns:
            self.g.sinks.append(self.g.node("return", r))

    # -- statements --------------------------------------------------------------------------
    def _block(self, body, f: _Frame, cls) -> bool:
        """Run ``body``; True when it always ends in ``return``/``raise`` (a guard clause)."""
        for stmt in body:
            if self._stmt(stmt, f, cls):
                return True
        return False

    def _stmt(self, s, f: _Frame, cls) -> bool:
        self.g.tick()
        g, ev = self.g, (lambda e: self._ev(e, f, cls))
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call):
                name = self._callee_name(s.value)
                value = ev(s.value)
                if name in MUTATORS or name.endswith("_") or self._local(s.value.func, cls, f):
                    self._sink(value if g.label[value] == "store" else g.node("do", value), f)
                    if name == "register_buffer":
                        named = {k.arg: k.value for k in s.value.keywords}
                        key, tensor = (*s.value.args, None, None)[:2]
                        key = self._const(key or named.get("name"), f)
                        tensor = tensor or named.get("tensor")
                        if isinstance(key, str) and tensor is not None:
                            self.attrs[key] = ev(tensor)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            value = ev(s.value)
            for target in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                self._bind(target, value, s.value, f, cls)
        elif isinstance(s, ast.AugAssign):
            op = ast.BinOp(left=_load(s.target), op=s.op, right=s.value)
            self._bind(s.target, ev(op), op, f, cls)
        elif isinstance(s, ast.Return):
            f.returns.append(ev(s.value) if s.value is not None else g.node("C:None"))
            return True
        elif isinstance(s, ast.Raise):
            self._sink(g.node("raise", ev(s.exc) if s.exc is not None else g.node("reraise")), f)
            return True
        elif isinstance(s, ast.Assert):
            self._sink(g.node("raise", self._cond(s.test, f, cls, negate=True)), f)
        elif isinstance(s, ast.If):
            return self._if(s, f, cls)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self._for(s, f, cls)
        elif isinstance(s, ast.While):
            f.guards.append(self._cond(s.test, f, cls))
            self._merge(f, s.body, cls)
            f.guards.pop()
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            return self._block(s.body, f, cls)
        elif isinstance(s, ast.Try):
            self._block(s.body, f, cls)
            for h in s.handlers:
                self._merge(f, h.body, cls)
            self._block(s.orelse + s.finalbody, f, cls)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for a in s.names:
                self.aliases[a.asname or a.name.split(".")[0]] = a.name.split(".")[-1]
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions.setdefault(s.name, s)
        return False

    def _sink(self, value: int, f: _Frame) -> None:
        self.g.sinks.append(self.g.node("guarded", value, *f.guards, unordered=True) if f.guards else value)

    def _merge(self, f: _Frame, body, cls) -> None:
        """Run ``body`` on a copy of the variables; a variable it changes becomes ``phi(old, new)``."""
        inner = _Frame(dict(f.env), dict(f.consts), f.depth)
        inner.guards, inner.returns = f.guards, f.returns
        self._block(body, inner, cls)
        for name, value in inner.env.items():
            if f.env.get(name) != value:
                f.env[name] = self.g.node("phi", value, *([f.env[name]] if name in f.env else []), unordered=True)

    def _if(self, s: ast.If, f: _Frame, cls) -> bool:
        cond = self._cond(s.test, f, cls)
        f.guards.append(cond)
        body = _Frame(dict(f.env), dict(f.consts), f.depth)
        body.guards, body.returns = f.guards, f.returns
        ends = self._block(s.body, body, cls)
        f.guards[-1] = self._cond(s.test, f, cls, negate=True)
        other = _Frame(dict(f.env), dict(f.consts), f.depth)
        other.guards, other.returns = f.guards, f.returns
        other_ends = self._block(s.orelse, other, cls)
        f.guards.pop()
        if ends and other_ends:
            return True
        if ends or other_ends:
            f.env = (other if ends else body).env
            return False
        for name in set(body.env) | set(other.env):
            a, b = body.env.get(name), other.env.get(name)
            f.env[name] = a if a == b else self.g.node("phi", *(v for v in (a, b) if v is not None), unordered=True)
        return False

    def _for(self, s, f: _Frame, cls) -> None:
        items = s.iter.elts if isinstance(s.iter, (ast.Tuple, ast.List)) else None
        if items is not None and len(items) <= MAX_UNROLL:
            for item in items:
                self._bind(s.target, self._ev(item, f, cls), item, f, cls)
                self._block(s.body, f, cls)
            return
        self._bind(s.target, self.g.node("iter", self._ev(s.iter, f, cls)), None, f, cls)
        self._merge(f, s.body, cls)

    def _bind(self, target, value: int, value_ast, f: _Frame, cls) -> None:
        g = self.g
        if isinstance(target, ast.Name):
            f.env[target.id] = value
            const = value_ast if isinstance(value_ast, ast.Lambda) else \
                self._const(value_ast, f) if value_ast is not None else None
            if const is not None:
                f.consts[target.id] = const
            else:
                f.consts.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value_ast.elts if isinstance(value_ast, (ast.Tuple, ast.List)) and \
                len(value_ast.elts) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                if parts is not None:
                    self._bind(t, self._ev(parts[i], f, cls), parts[i], f, cls)
                else:
                    self._bind(t, self._item(value, i), None, f, cls)
        elif isinstance(target, ast.Attribute) and self._is_self(target.value, f):
            self.attrs[target.attr] = value
            self._sink(g.node("store", value), f)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in f.env:
            f.env[target.value.id] = self._layout([f.env[target.value.id], value])
        elif isinstance(target, ast.Starred):
            self._bind(target.value, g.node("rest", value), None, f, cls)
        else:
            self._sink(g.node("store", value, self._ev(target, f, cls)), f)



def _load(target):
    """``target`` as an expression that reads it (for ``x += y``)."""
    import copy

    node = copy.copy(target)
    node.ctx = ast.Load()
    return node


def graph(code: str, entries: set[str] | None = None) -> Graph | None:
    """The normalised graph of Python ``code``'s entry points (``entries``: qualified names such as
    ``"MultiHeadAttention.forward"``; None: the functions the module never calls, and ``__init__``).

    Returns None when ``code`` does not parse (``SyntaxError``, ``ValueError`` for a null byte, or
    ``RecursionError``/``MemoryError`` from the parser on deep nesting). Raises :class:`TooComplex`
    past :data:`MAX_WORK` units of work.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return Evaluator(tree, entries).run()
    except RecursionError as exc:  # pragma: no cover - MAX_DEPTH keeps well below the interpreter's limit
        raise TooComplex("nesting too deep") from exc


def stub_entries(stub: str | None) -> set[str] | None:
    """The qualified names of the functions and methods the starter ``stub`` defines (None: no stub)."""
    if not stub:
        return None
    tree = ast.parse(stub)
    names = set()
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(s.name)
        elif isinstance(s, ast.ClassDef):
            names |= {f"{s.name}.{m.name}" for m in s.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names
