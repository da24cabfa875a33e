"""Expressions of the normalised graph (:mod:`.normalise`): one form for each equivalent way of
writing a value (see :mod:`.normalise` for the rules). A mixin of :class:`.normalise.Evaluator`,
which owns the graph (``self.g``), the module's functions and ``self``'s attributes."""

from __future__ import annotations

import ast
import re

MAX_DEPTH = 60          # expression / inlining nesting evaluated; deeper is one opaque node
MAX_NAME = 256          # constant strings longer than this are not built (attribute names)
MAX_INLINE = 6          # helper calls inlined inside one another at most this deep

LAYOUT = frozenset("""view reshape flatten unflatten transpose permute chunk split unbind stack cat concat
concatenate hstack vstack squeeze unsqueeze expand expand_as movedim moveaxis swapaxes swapdims narrow
repeat tile repeat_interleave T mT t select index_select gather masked_select roll flip""".split())
CASTS = frozenset("""to type_as float double half bfloat16 contiguous clone detach cpu cuda type tuple list
tensor as_tensor item int""".split())
SYNONYMS = {"mm": "matmul", "bmm": "matmul", "multiply": "mul", "divide": "div", "true_divide": "div",
            "subtract": "sub", "negative": "neg", "greater": "gt", "less": "lt", "ndimension": "dim",
            "masked_fill_": "masked_fill", "numel": "numel", "logical_not": "not", "bitwise_not": "not",
            "logical_or": "or", "bitwise_or": "or", "logical_and": "and", "bitwise_and": "and",
            "fill_": "fill", "where": "where", "power": "pow", "float_power": "pow", "rsqrt": "rsqrt"}
MUTATORS = frozenset({"register_buffer", "register_parameter", "add_module", "append", "extend", "update",
                      "insert", "setattr", "__init__", "copy_", "apply"})
FACTORIES = frozenset({"zeros", "empty", "zeros_like", "empty_like", "new_zeros", "new_empty"})
FLIP = {ast.Gt: "lt", ast.GtE: "lt", ast.Lt: "lt", ast.LtE: "lt", ast.Eq: "eq", ast.NotEq: "ne",
        ast.Is: "eq", ast.IsNot: "ne", ast.In: "in", ast.NotIn: "notin"}
NEGATED = {"lt": "lt", "eq": "ne", "ne": "eq", "in": "notin", "notin": "in"}



class Expressions:
    """Evaluates expressions, conditions and calls (helpers inlined) into graph nodes."""

    def _ev(self, e, f, cls) -> int:
        self.g.tick()
        if f.depth > MAX_DEPTH:
            return self.g.node("deep")
        f.depth += 1
        try:
            return self._ev_inner(e, f, cls)
        finally:
            f.depth -= 1

    def _ev_inner(self, e, f, cls) -> int:  # noqa: C901 - one case per node type
        g, ev = self.g, (lambda x: self._ev(x, f, cls))
        if isinstance(e, ast.Name):
            if e.id in f.env:
                return f.env[e.id]
            return g.node("G:" + self.aliases.get(e.id, e.id))
        if isinstance(e, ast.Constant):
            return g.node("C:" + ("str" if isinstance(e.value, (str, bytes)) else type(e.value).__name__
                                  if not isinstance(e.value, (int, float)) or isinstance(e.value, bool) else "num"))
        if isinstance(e, ast.Attribute):
            base = ev(e.value)
            if self._is_self(e.value, f):
                return self._self_attr(e.attr)
            if e.attr in ("shape",):
                return g.node("shape", base)
            if e.attr in ("ndim",):
                return g.node("ndim", base)
            if e.attr in ("T", "mT", "H", "mH"):
                return self._layout([base])
            if isinstance(e.value, ast.Name) and e.value.id in self.aliases or g.label.get(base, "").startswith("G:"):
                return g.node("G:" + e.attr)
            if e.attr in ("dtype", "device", "data"):
                return base
            return g.node("call:" + e.attr, base)
        if isinstance(e, ast.Subscript):
            base = ev(e.value)
            if g.label[base] == "shape":
                return g.node("size", *g.children[base])
            if g.label[base] == "tuple" and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int) \
                    and -len(g.children[base]) <= e.slice.value < len(g.children[base]):
                return g.children[base][e.slice.value]
            return self._layout([base])
        if isinstance(e, ast.Call):
            return self._call(e, f, cls)
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.Mod) and isinstance(e.left, (ast.Constant, ast.JoinedStr)) and \
                    isinstance(getattr(e.left, "value", ""), str):
                values = e.right.elts if isinstance(e.right, ast.Tuple) else [e.right]
                return g.node("format", *map(ev, values), unordered=True)
            return self._binop(type(e.op).__name__, ev(e.left), ev(e.right), e.right)
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, (ast.Not, ast.Invert)):
                return self._cond(e.operand, f, cls, negate=True)
            if isinstance(e.op, ast.USub):
                return ev(e.operand) if isinstance(e.operand, ast.Constant) else self._neg(ev(e.operand))
            return ev(e.operand)
        if isinstance(e, (ast.Compare, ast.BoolOp)):
            return self._cond(e, f, cls)
        if isinstance(e, ast.IfExp):
            return g.node("ifexp", self._cond(e.test, f, cls), ev(e.body), ev(e.orelse))
        if isinstance(e, (ast.Tuple, ast.List)):
            return g.node("tuple", *map(ev, e.elts))
        if isinstance(e, ast.Set):
            return g.node("set", *map(ev, e.elts), unordered=True)
        if isinstance(e, ast.Dict):
            return g.node("dict", *(ev(x) for x in [*e.keys, *e.values] if x is not None), unordered=True)
        if isinstance(e, ast.JoinedStr):
            return g.node("format", *(ev(v.value) for v in e.values if isinstance(v, ast.FormattedValue)), unordered=True)
        if isinstance(e, ast.FormattedValue):
            return ev(e.value)
        if isinstance(e, ast.Starred):
            return ev(e.value)
        if isinstance(e, ast.NamedExpr):
            value = ev(e.value)
            f.env[e.target.id] = value
            return value
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = type(f)(dict(f.env), dict(f.consts), f.depth)
            for gen in e.generators:
                self._bind(gen.target, g.node("iter", self._ev(gen.iter, inner, cls)), None, inner, cls)
            elts = [e.key, e.value] if isinstance(e, ast.DictComp) else [e.elt]
            return g.node("comp", *(self._ev(x, inner, cls) for x in elts))
        if isinstance(e, ast.Slice):
            return g.node("slice")
        return g.node(type(e).__name__)

    def _neg(self, x: int) -> int:
        if self.g.label[x] == "neg":
            return self.g.children[x][0]
        return self.g.node("neg", x)

    def _binop(self, op: str, a: int, b: int, b_ast=None) -> int:
        g = self.g
        if op == "Sub":
            op, b = "Add", self._neg(b)
        elif op == "Div":
            op, b = "Mult", (g.children[b][0] if g.label[b] == "recip" else g.node("recip", b))
        elif op == "Pow" and isinstance(b_ast, ast.Constant) and b_ast.value in (0.5, -0.5):
            root = g.node("sqrt", a)
            return root if b_ast.value == 0.5 else g.node("recip", root)
        if op in ("Add", "Mult", "BitOr", "BitAnd"):
            label = {"Add": "add", "Mult": "mul", "BitOr": "or", "BitAnd": "and"}[op]
            a, b = (self._unbroadcast(x) for x in (a, b))
            negs = 0
            if label == "mul":  # (-a) * b is -(a * b)
                negs = sum(g.label[x] == "neg" for x in (a, b))
                a, b = (g.children[x][0] if g.label[x] == "neg" else x for x in (a, b))
            parts = [c for x in (a, b) for c in (g.children[x] if g.label[x] == label else (x,))]
            product = g.node(label, *parts, unordered=True)
            return self._neg(product) if negs % 2 else product
        if op == "Pow" and g.label[b] == "neg":  # c ** -y is 1 / c ** y
            return g.node("recip", g.node("pow", a, g.children[b][0]))
        return g.node({"MatMult": "matmul", "Pow": "pow"}.get(op, op.lower()), a, b)

    def _unbroadcast(self, x: int) -> int:
        """An element-wise operand: a layout of one value (``[:, None]``, ``unsqueeze``) is that value."""
        return self.g.children[x][0] if self.g.label[x] == "layout" and len(self.g.children[x]) == 1 else x

    def _layout(self, values: list[int]) -> int:
        """One ``layout`` node over the non-layout, non-constant, non-factory values moved."""
        g, leaves, todo = self.g, [], list(values)
        while todo:
            g.tick()
            v = todo.pop()
            if g.label[v] in ("layout", "tuple"):
                todo.extend(g.children[v])
            elif not g.label[v].startswith("C:") and g.label[v][5:] not in FACTORIES:
                leaves.append(v)
        return g.node("layout", *leaves, unordered=True)

    def _self_attr(self, key) -> int:
        """``self.<key>``: the kind of value ``__init__`` stored there (its top label), not the
        value itself, so a difference inside a stored value stays in the features of ``__init__``."""
        value = self.attrs.get(key) if isinstance(key, str) else None
        return self.g.node("attr:" + (self.g.label[value] if value is not None else "?"))

    def _item(self, value: int, index: int) -> int:
        label = self.g.label[value]
        if label == "tuple" and index < len(self.g.children[value]):
            return self.g.children[value][index]
        if label == "shape":
            return self.g.node("size", *self.g.children[value])
        return self._layout([value])

    def _cond(self, e, f, cls, negate: bool = False) -> int:
        g = self.g
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Not, ast.Invert)):
            return self._cond(e.operand, f, cls, not negate)
        if isinstance(e, ast.BoolOp):
            is_and = isinstance(e.op, ast.And) != negate
            label = "and" if is_and else "or"
            parts = [self._cond(v, f, cls, negate) for v in e.values]
            flat = [c for p in parts for c in (g.children[p] if g.label[p] == label else (p,))]
            return g.node(label, *flat, unordered=True)
        if isinstance(e, ast.Compare):
            parts, left = [], e.left
            for op, right in zip(e.ops, e.comparators):
                a, b = self._ev(left, f, cls), self._ev(right, f, cls)
                name = FLIP[type(op)]
                if isinstance(op, (ast.Gt, ast.GtE)):
                    a, b = b, a
                if negate:
                    name = NEGATED[name]
                    if name == "lt":
                        a, b = b, a
                parts.append(g.node(name, a, b, unordered=name in ("eq", "ne")))
                left = right
            if len(parts) == 1:
                return parts[0]
            return g.node("or" if negate else "and", *parts, unordered=True)
        value = self._ev(e, f, cls)
        return g.node("not", value) if negate else value

    def _callee_name(self, call: ast.Call) -> str:
        fn = call.func
        return fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""

    def _is_self(self, e, f) -> bool:
        """Whether expression ``e`` is a name holding the module's ``self`` (``self``, or a helper's
        parameter it was passed to)."""
        return isinstance(e, ast.Name) and f is not None and e.id in f.env and self.g.label[f.env[e.id]] == "self"

    def _local(self, fn, cls, f=None):
        """The ``FunctionDef`` a call's target names in this module (a function, a method of ``self``
        or of a class of the module, a lambda bound to a local name), or None."""
        if isinstance(fn, ast.Name) and f is not None and isinstance(f.consts.get(fn.id), ast.Lambda):
            lam = f.consts[fn.id]
            return ast.FunctionDef(name=f"<lambda {fn.id}>", args=lam.args, body=[ast.Return(value=lam.body)],
                                   decorator_list=[])
        if isinstance(fn, ast.Name) and fn.id in self.functions and (f is None or fn.id not in f.env):
            return self.functions[fn.id]
        if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
            if cls and (self._is_self(fn.value, f) if f is not None else fn.value.id == "self"):
                return self.classes.get(cls, {}).get(fn.attr)
            if fn.value.id in self.classes and (f is None or fn.value.id not in f.env):
                return self.classes[fn.value.id].get(fn.attr)
        return None

    def _call(self, e: ast.Call, f, cls) -> int:  # noqa: C901 - one case per kind of call
        g, ev = self.g, (lambda x: self._ev(x, f, cls))
        name = self._callee_name(e)
        args = [*e.args, *(k.value for k in e.keywords)]
        local = self._local(e.func, cls, f)
        if local is not None:
            return self._inline(local, e, f, cls)
        if name in ("setattr", "getattr") and len(e.args) >= 2 and isinstance(e.args[0], ast.Name) \
                and self._is_self(e.args[0], f):
            key = self._const(e.args[1], f)
            if name == "getattr":
                return self._self_attr(key)
            value = ev(e.args[2]) if len(e.args) > 2 else g.node("C:None")
            if isinstance(key, str):
                self.attrs[key] = value
            return g.node("store", value)
        if name == "len" and len(e.args) == 1:
            inner = ev(e.args[0])
            return g.node("ndim", *g.children[inner]) if g.label[inner] == "shape" else g.node("size", inner)
        if isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Constant) and name == "format":
            return g.node("format", *map(ev, args), unordered=True)
        if isinstance(e.func, ast.Call) or (isinstance(e.func, ast.Attribute) and
                                             self._is_self(e.func.value, f)):
            return g.node("apply", ev(e.func), *map(ev, args))
        is_method = isinstance(e.func, ast.Attribute) and not (
            isinstance(e.func.value, ast.Name) and (e.func.value.id in self.aliases or e.func.value.id not in f.env)
            or isinstance(e.func.value, ast.Attribute) and g.label.get(ev(e.func.value), "").startswith("G:"))
        if isinstance(e.func, ast.Name) and e.func.id in f.env:
            return g.node("apply", f.env[e.func.id], *map(ev, args))
        values = ([ev(e.func.value)] if is_method else []) + [ev(a) for a in args]
        values = [v for v in values if not g.label[v].startswith("G:")] or values  # dtypes, devices
        name = SYNONYMS.get(name, name)
        if name in ("size", "shape") and values:
            return g.node("shape" if len(values) == 1 else "size", values[0])
        if name == "dim" and len(values) == 1:
            return g.node("ndim", values[0])
        if name in LAYOUT and values:
            return self._layout(values[:1])
        if name in CASTS and values:
            return values[0]
        if name == "sqrt" and len(values) == 1:
            return g.node("sqrt", values[0])
        if name == "outer" and len(values) == 2:
            name = "mul"
        if name in ("add", "sub", "mul", "div", "matmul", "pow") and len(values) == 2:
            return self._binop({"add": "Add", "sub": "Sub", "mul": "Mult", "div": "Div", "matmul": "MatMult",
                                "pow": "Pow"}[name], values[0], values[1], args[-1] if args else None)
        if name == "neg" and len(values) == 1:
            return self._neg(values[0])
        return g.node("call:" + name, *values, unordered=True)

    def _inline(self, func, call: ast.Call, f, cls) -> int:
        g = self.g
        qual = func.name
        if qual in self.stack or len(self.stack) > MAX_INLINE:
            return g.node("call:" + qual, *(self._ev(a, f, cls) for a in call.args), unordered=True)
        positional = func.args.posonlyargs + func.args.args
        is_method = cls is not None and isinstance(call.func, ast.Attribute) and self._is_self(call.func.value, f) \
            and not any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                                          for d in func.decorator_list)
        env, consts = {}, {}
        if is_method and positional:
            env[positional[0].arg] = g.node("self")
            positional = positional[1:]
        defaults = func.args.defaults
        for i, p in enumerate(positional):
            d = i - (len(positional) - len(defaults))
            if d >= 0:
                env[p.arg] = self._ev(defaults[d], f, cls)
        for p, d in zip(func.args.kwonlyargs, func.args.kw_defaults):
            if d is not None:
                env[p.arg] = self._ev(d, f, cls)
        for p, a in zip(positional, call.args):
            env[p.arg] = self._ev(a, f, cls)
            c = self._const(a, f)
            if c is not None:
                consts[p.arg] = c
        for k in call.keywords:
            if k.arg is not None:
                env[k.arg] = self._ev(k.value, f, cls)
        for p in [*positional, *func.args.kwonlyargs]:
            env.setdefault(p.arg, g.node("P"))
        self.stack.append(qual)
        inner = type(f)(env, consts, f.depth)
        inner.guards = list(f.guards)
        self._block(func.body, inner, cls)  # a module helper passed ``self`` reads its attributes too
        self.stack.pop()
        if not inner.returns:
            return g.node("C:None")
        return inner.returns[-1] if len(set(inner.returns)) == 1 else g.node("phi", *inner.returns, unordered=True)

    def _const(self, e, f):
        """The Python value of a constant string/number expression (loop variables, f-strings, ``%``
        and ``str.format`` with plain placeholders included), or None. Only names up to
        :data:`MAX_NAME` characters are built (an attribute name; no width or precision is honoured)."""
        value = self._const_inner(e, f)
        return None if isinstance(value, str) and len(value) > MAX_NAME else value

    def _const_inner(self, e, f):
        if isinstance(e, ast.Constant) and isinstance(e.value, (str, int, float)):
            return e.value
        if isinstance(e, ast.Name):
            return f.consts.get(e.id)
        parts, template = None, None
        if isinstance(e, ast.JoinedStr):
            parts = [self._const(v.value if isinstance(v, ast.FormattedValue) else v, f) for v in e.values]
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            a, b = self._const(e.left, f), self._const(e.right, f)
            return a + b if isinstance(a, str) and isinstance(b, str) else None
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod) and isinstance(e.left, ast.Constant):
            template, args = e.left.value, (e.right.elts if isinstance(e.right, ast.Tuple) else [e.right])
            pieces = re.split(r"%[sdir]", template) if isinstance(template, str) and "%%" not in template else []
            if len(pieces) == len(args) + 1 and not any("%" in p for p in pieces):
                values = [self._const(a, f) for a in args]
                parts = [x for pair in zip(pieces, values + [""]) for x in pair]
        elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "format" \
                and isinstance(e.func.value, ast.Constant) and isinstance(e.func.value.value, str) and not e.keywords:
            pieces = re.split(r"\{\}", e.func.value.value)
            if len(pieces) == len(e.args) + 1 and not any(c in p for p in pieces for c in "{}"):
                values = [self._const(a, f) for a in e.args]
                parts = [x for pair in zip(pieces, values + [""]) for x in pair]
        if parts is None or any(p is None or not isinstance(p, (str, int, float)) for p in parts):
            return None
        try:
            return "".join(map(str, parts))
        except ValueError:  # an int past Python's digit limit
            return None
