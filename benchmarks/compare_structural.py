"""Issue 33's optional part, measured (not a test, not used by the kit): copydetect's token
winnowing against a prototype structural matcher on a small evasion set.

The evasion set is one copied ``positional_encoding.py`` (the stub filled in, as a student
does) and three rewrites of it, one per class of the issue's table: equivalent API calls,
three-address form with dead statements, the helper inlined with tuple unpacking. The
independent set is five correct solutions written differently (the reference, two of
``tests/test_similarity.py``'s, alice's loops, one with ``torch.outer`` and ``stack``).

The structural prototype parses each module (:mod:`ast`), per function removes dead
assignments and inlines single-use temporaries (undoing three-address form), then fingerprints
the pre-order sequence of node types (names and constants as placeholders, attribute names
kept) by k-grams; the stub's k-grams never count; the similarity of two modules is the larger
share of either's k-grams found in the other. Run::

    .venv/bin/python benchmarks/compare_structural.py
"""

from __future__ import annotations

import ast
import re
import sys
import tempfile
import textwrap
from hashlib import blake2b
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.similarity import matcher  # noqa: E402

STUB = (REPO / "exercises" / "positional_encoding.py").read_text(encoding="utf-8")
K = 12   # tokens per k-gram of the structural prototype

CHECKS = """
    if d_model < 2 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
"""
INIT = """
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0), persistent=True)
    self.dropout = nn.Dropout(dropout)
"""
FORWARD = """
    if x.dim() != 3 or x.shape[-1] != self.pe.shape[2]:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if x.shape[1] > self.pe.shape[1]:
        raise ValueError(f"sequence length S must be <= max_len, got S={x.shape[1]}")
    return self.dropout(x + self.pe[:, :x.shape[1]].to(dtype=x.dtype, device=x.device))
"""

CHECKS_C = """
    if d_model % 2 != 0 or d_model < 2:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len <= 0:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
"""
COPIED = {
    "sinusoidal_table": CHECKS_C + """
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
""",
    "PositionalEncoding.__init__": """
    if dropout < 0.0 or dropout > 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    table = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", table[None], persistent=True)
    self.dropout = nn.Dropout(p=dropout)
""",
    "PositionalEncoding.forward": """
    length = x.size(1)
    if x.ndim != 3 or x.size(-1) != self.pe.size(-1):
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if length > self.pe.size(1):
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    return self.dropout(x + self.pe[:, :length].type_as(x))
""",
}
REWRITES = {
    "api": {  # equivalent API calls, keyword arguments, %-formatting, every statement
        "sinusoidal_table": """
    if not (d_model >= 2 and d_model % 2 == 0):
        raise ValueError("d_model must be a positive even number, got d_model=%d" % d_model)
    if not max_len >= 1:
        raise ValueError("max_len must be >= 1, got max_len=%d" % max_len)
    position = torch.arange(start=0, end=max_len, dtype=torch.float32)[:, None]
    div_term = torch.pow(torch.tensor(10000.0), torch.arange(start=0, end=d_model, step=2).float().neg() / d_model)
    angles = torch.outer(position.squeeze(1), div_term)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(start_dim=1)
""",
        "PositionalEncoding.__init__": """
    if not (0.0 <= dropout <= 1.0):
        raise ValueError("dropout must be in [0, 1], got dropout=%s" % (dropout,))
    self.register_buffer(name="pe", tensor=sinusoidal_table(max_len=max_len, d_model=d_model).unsqueeze(dim=0),
                         persistent=True)
    setattr(self, "dropout", nn.Dropout(p=dropout))
""",
        "PositionalEncoding.forward": """
    if len(x.shape) != 3 or x.shape[2] != self.pe.shape[2]:
        raise ValueError("x must have shape [B, S, d_model], got x.shape=%s" % (tuple(x.shape),))
    if not x.dtype.is_floating_point:
        raise ValueError("x must be a floating-point tensor, got x.dtype=%s" % (x.dtype,))
    if x.shape[1] > self.pe.shape[1]:
        raise ValueError("sequence length S must be <= max_len, got S=%d" % x.shape[1])
    return self.dropout(torch.add(x, self.pe.narrow(1, 0, x.shape[1]).to(x.dtype)))
""",
    },
    "three_address": {  # one operation per statement, dead statements between
        "sinusoidal_table": """
    odd = d_model % 2
    unused = odd + 1
    if odd != 0 or d_model < 2:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len <= 0:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
    pe = torch.zeros(max_len, d_model)
    unused = max_len * 2
    a = torch.arange(0, max_len)
    b = a.unsqueeze(1)
    position = b.float()
    unused = position.sum()
    c = torch.arange(0, d_model, 2)
    d = c.float()
    e = math.log(10000.0)
    f = -e
    g = f / d_model
    h = d * g
    div_term = torch.exp(h)
    unused = div_term.numel()
    arg = position * div_term
    s = torch.sin(arg)
    pe[:, 0::2] = s
    co = torch.cos(arg)
    pe[:, 1::2] = co
    return pe
""",
        "PositionalEncoding.__init__": """
    low = dropout < 0.0
    high = dropout > 1.0
    unused = low and high
    if low or high:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    table = sinusoidal_table(max_len, d_model)
    unused = table.shape
    batched = table[None]
    self.register_buffer("pe", batched, persistent=True)
    layer = nn.Dropout(p=dropout)
    self.dropout = layer
""",
        "PositionalEncoding.forward": """
    length = x.size(1)
    unused = length + 1
    rank = x.ndim
    width = x.size(-1)
    table_width = self.pe.size(-1)
    if rank != 3 or width != table_width:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    is_float = torch.is_floating_point(x)
    if not is_float:
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    limit = self.pe.size(1)
    if length > limit:
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    part = self.pe[:, :length]
    part = part.type_as(x)
    total = x + part
    return self.dropout(total)
""",
    },
    "inlined": {  # helpers inlined, unflatten/flatten, tuple unpacking
        "sinusoidal_table": CHECKS_C + """
    position, index = torch.arange(0, max_len).float(), torch.arange(0, d_model, 2).float()
    div_term = torch.exp(index * (-math.log(10000.0) / d_model))
    sin, cos = torch.sin(position[:, None] * div_term), torch.cos(position[:, None] * div_term)
    return torch.cat((sin.unsqueeze(-1), cos.unsqueeze(-1)), dim=-1).flatten(-2)
""",
        "PositionalEncoding.__init__": """
    if dropout < 0.0 or dropout > 1.0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    pe, position = torch.zeros(max_len, d_model), torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div_term), torch.cos(position * div_term)
    self.register_buffer("pe", pe.unflatten(0, (1, max_len)), persistent=True)
    self.dropout = nn.Dropout(p=dropout)
""",
        "PositionalEncoding.forward": """
    (_, length, width), (_, limit, table_width) = (x.shape if x.ndim == 3 else (0, 0, -1)), self.pe.shape
    if width != table_width:
        raise ValueError(f"x must have shape [B, S, d_model], got x.shape={tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    if length > limit:
        raise ValueError(f"sequence length S must be <= max_len, got S={length}")
    return self.dropout(x + self.pe[:, :length].type_as(x))
""",
    },
}
INDEPENDENT = {
    "ref": {"sinusoidal_table": CHECKS + """
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = position / torch.pow(10000.0, two_i / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.to(torch.float32)
""", "PositionalEncoding.__init__": INIT, "PositionalEncoding.forward": FORWARD},
    "freqs": {"sinusoidal_table": """
    if d_model % 2 or d_model < 2 or max_len < 1:
        raise ValueError(f"bad sizes: d_model={d_model}, max_len={max_len}")
    freqs = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * freqs)
    pe[:, 1::2] = torch.cos(position * freqs)
    return pe.float()
""", "PositionalEncoding.__init__": """
    assert_ok = 0.0 <= dropout <= 1.0
    if not assert_ok:
        raise ValueError(f"dropout={dropout} is not in [0, 1]")
    self.drop = nn.Dropout(dropout)
    self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0))
""", "PositionalEncoding.forward": """
    b, s, d = x.shape if x.dim() == 3 else (None, None, None)
    if d != self.pe.shape[-1] or s > self.pe.shape[1] or not x.dtype.is_floating_point:
        raise ValueError(f"x must be a float [B, S<=max_len, d_model], got {tuple(x.shape)} {x.dtype}")
    return self.drop(x + self.pe[:, :s, :].to(x))
"""},
    "loops": {"sinusoidal_table": """
    if d_model <= 0 or d_model % 2:
        raise ValueError(f"d_model should be even and positive (got d_model={d_model})")
    if max_len < 1:
        raise ValueError(f"max_len should be at least 1 (got max_len={max_len})")
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / (10000.0 ** (i / d_model))
            table[pos, i] = math.sin(angle)
            table[pos, i + 1] = math.cos(angle)
    return table.float()
""", "PositionalEncoding.__init__": """
    if dropout < 0 or dropout > 1:
        raise ValueError(f"dropout should be between 0 and 1 (got dropout={dropout})")
    self.p = dropout
    self.dropout = nn.Dropout(self.p)
    big = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", big.reshape(1, max_len, d_model), persistent=True)
""", "PositionalEncoding.forward": """
    shape = tuple(x.shape)
    if len(shape) != 3:
        raise ValueError(f"x should be [B, S, d_model] (got x.shape={shape})")
    if shape[2] != self.pe.shape[2]:
        raise ValueError(f"last axis should be d_model={self.pe.shape[2]} (got x.shape={shape})")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise ValueError(f"x should be floating point (got x.dtype={x.dtype})")
    if shape[1] > self.pe.shape[1]:
        raise ValueError(f"S={shape[1]} is longer than max_len={self.pe.shape[1]}")
    added = x + self.pe[:, : shape[1]].to(device=x.device, dtype=x.dtype)
    return self.dropout(added)
"""},
    "outer": {"sinusoidal_table": """
    if max_len <= 0 or d_model <= 0 or d_model % 2 == 1:
        raise ValueError("max_len must be >= 1 and d_model a positive even number, got max_len=%d, d_model=%d"
                         % (max_len, d_model))
    inv = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    out = torch.stack([torch.sin(ang), torch.cos(ang)], dim=2).reshape(max_len, d_model)
    return out.to(torch.float32)
""", "PositionalEncoding.__init__": """
    if dropout > 1 or dropout < 0:
        raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
    self.dropout = nn.Dropout(dropout)
    pe = sinusoidal_table(max_len, d_model)
    self.register_buffer("pe", pe.unsqueeze(0), persistent=True)
""", "PositionalEncoding.forward": """
    if x.dim() != 3:
        raise ValueError(f"x must be 3-D [B, S, d_model], got x.shape={tuple(x.shape)}")
    if x.size(2) != self.pe.size(2):
        raise ValueError(f"x's last dimension must be d_model={self.pe.size(2)}, got {x.size(2)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got x.dtype={x.dtype}")
    n = x.size(1)
    if n > self.pe.size(1):
        raise ValueError(f"sequence length S must be <= max_len, got S={n}, max_len={self.pe.size(1)}")
    return self.dropout(x + self.pe[:, :n].to(dtype=x.dtype, device=x.device))
"""},
}


def filled(bodies: dict[str, str]) -> str:
    """The stub with each function's TODO replaced by its body (as tests/test_similarity.py does)."""
    code = STUB
    for func, body in bodies.items():
        line = re.search(rf"^( +)raise NotImplementedError\(\"positional_encoding: {re.escape(func)} .*$", code, re.M)
        assert line, func
        code = code.replace(line.group(0), textwrap.indent(textwrap.dedent(body).strip(), line.group(1)))
    ast.parse(code)
    return code


# -- the structural prototype --------------------------------------------------------------------

def _loads(tree) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _simplify(func: ast.FunctionDef) -> None:
    """Dead assignments removed, single-use temporaries inlined, until nothing changes."""
    changed = True
    while changed:
        changed = False
        loads = _loads(func)
        body = func.body
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if loads.get(name, 0) == 0:                       # dead
                    del body[i]
                    changed = True
                    break
                stores = sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                             for n in ast.walk(func))
                if loads[name] == 1 and stores == 1:              # a single-use temporary
                    value = stmt.value

                    class Inline(ast.NodeTransformer):
                        def visit_Name(self, node):
                            return value if node.id == name and isinstance(node.ctx, ast.Load) else node

                    del body[i]
                    for j in range(i, len(body)):
                        body[j] = Inline().visit(body[j])
                    changed = True
                    break


def tokens(code: str) -> list[str]:
    """The module's normalised pre-order node sequence."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            _simplify(node)
    out: list[str] = []

    def visit(node):
        if isinstance(node, ast.Name):
            out.append("N")
        elif isinstance(node, ast.Constant):
            out.append("C")
        elif isinstance(node, ast.Attribute):
            out.append("." + node.attr)
        elif isinstance(node, ast.keyword):
            out.append("kw")
        else:
            out.append(type(node).__name__)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.expr_context, ast.JoinedStr)):
                visit(child)

    visit(tree)
    return out


def kgrams(code: str) -> set[int]:
    toks = tokens(code)
    return {int.from_bytes(blake2b(" ".join(toks[i:i + K]).encode(), digest_size=8).digest(), "little")
            for i in range(len(toks) - K + 1)}


def structural(a: str, b: str, stub: set[int]) -> float:
    ka, kb = kgrams(a) - stub, kgrams(b) - stub
    shared = len(ka & kb)
    return max(shared / len(ka) if ka else 0.0, shared / len(kb) if kb else 0.0)


def main() -> None:
    modules = {"copied": filled(COPIED), **{f"copy_{k}": filled(v) for k, v in REWRITES.items()},
               **{f"ind_{k}": filled(v) for k, v in INDEPENDENT.items()}}
    with tempfile.TemporaryDirectory() as tmp:
        entries = []
        for sid, code in modules.items():
            (Path(tmp) / sid).mkdir()
            (Path(tmp) / sid / "positional_encoding.py").write_text(code, encoding="utf-8")
            entries.append((sid, Path(tmp) / sid))
        result = matcher.compare_class(entries, reference=False, names=["positional_encoding"], time_limit=None)
    copy_sim = {(p.student_a, p.student_b): p.similarity for p in result.pairs}
    stub = kgrams(STUB)
    names = sorted(modules)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    rows = [(a, b, copy_sim.get((a, b), 0.0), structural(modules[a], modules[b], stub)) for a, b in pairs]
    print(f"{'pair':<36} {'copydetect':>10} {'structural':>10}")
    for kind in ("copy", "independent"):
        for a, b, c, s in rows:
            is_copy = a.startswith("cop") and b.startswith("cop") and "copied" in (a, b)
            if (kind == "copy") == is_copy and (is_copy or (a.startswith("ind") and b.startswith("ind"))):
                print(f"{a + ' / ' + b:<36} {c:>10.2f} {s:>10.2f}")
    ind = [(c, s) for a, b, c, s in rows if a.startswith("ind") and b.startswith("ind")]
    print(f"independent pairs: max copydetect {max(c for c, _ in ind):.2f}, max structural {max(s for _, s in ind):.2f}")


if __name__ == "__main__":
    main()
