"""The structural matcher: each rewrite class applied to a correct copy is flagged,
independent correct solutions are not, hostile modules are bounded, and the report shows it."""

import csv
import io
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import cli
from autograder.similarity import matcher, normalise, report, structural

from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests" / "data" / "similarity"))
import evasion  # noqa: E402

SETS = evasion.modules()



@pytest.fixture(autouse=True)
def flag_small_classes(monkeypatch):
    """These tests prove the flagging rules on classes of two or three students; a class that
    small is ranked, not flagged, in real use (``matcher.SMALL_CLASS``: tests/test_similarity_small_class.py)."""
    monkeypatch.setattr(matcher, "SMALL_CLASS", 0)

def class_result(tmp_path, exercise: str, mods: dict[str, str]) -> matcher.Result:
    entries = []
    for sid, code in mods.items():
        (tmp_path / sid).mkdir(parents=True)
        (tmp_path / sid / f"{exercise}.py").write_text(code, encoding="utf-8")
        entries.append((sid, tmp_path / sid))
    return matcher.compare_class(entries, reference=False, names=[exercise], time_limit=None)


def structure_of(result, a: str, b: str):
    found = [p for p in result.structure if {p.student_a, p.student_b} == {a, b}]
    return found[0] if found else None


@pytest.mark.parametrize("exercise", sorted(SETS))
def test_each_rewrite_class_of_a_correct_copy_is_flagged_and_independent_solutions_are_not(tmp_path, exercise):
    mods = dict(SETS[exercise], ind_reference=(REPO_ROOT / "solutions" / f"{exercise}.py").read_text(encoding="utf-8"))
    result = class_result(tmp_path, exercise, mods)
    for kind in evasion.REWRITES:
        pair = structure_of(result, "copied", f"copy_{kind}")
        assert pair is not None and pair.flagged, (kind, pair)
    flagged = {(p.student_a, p.student_b) for p in result.structure if p.flagged}
    independent = {(a, b) for a, b in flagged if a.startswith("ind_") and b.startswith("ind_")}
    assert independent == set()
    # the copy and its rewrites against independent solutions: only the copies of multi_head_attention and
    # encoder, which follow the stub's hints step by step as the reference does, reach the reference
    # (copydetect flags copied/reference there too; CHANGELOG): a prescribed computation is no evidence
    crossed = {(a, b) for a, b in flagged if a.startswith("cop") != b.startswith("cop")}
    assert all("ind_reference" in pair for pair in crossed)
    assert not crossed or exercise in ("multi_head_attention", "encoder")


def test_the_api_rewrite_that_copydetect_misses_is_flagged_by_structure(tmp_path):
    mods = {k: SETS["multi_head_attention"][k] for k in ("copied", "copy_api")}
    result = class_result(tmp_path, "multi_head_attention", mods)
    code = [p for p in result.pairs if {p.student_a, p.student_b} == {"copied", "copy_api"}]
    assert not code or not code[0].flagged  # tokens: chunk/stack, setattr loop, %-formatting, keywords
    pair = structure_of(result, "copied", "copy_api")
    assert pair.structure == 1.0 and pair.flagged
    assert report.evidence_of(result, None)[("copied", "copy_api", "multi_head_attention")] == "structure"


def test_rewrite_normal_forms_are_equal():
    """The mechanism: each equivalent pair of forms gives the same node."""
    def sinks(body: str) -> set:
        g = normalise.graph("import torch\nimport torch.nn.functional as F\n"
                            "def f(x, y, n):\n" + "".join("    " + line + "\n" for line in body.splitlines()))
        return set(g.sinks)

    same = [("return x.view(2, n, 3).transpose(1, 2)", "return torch.stack(x.chunk(n, dim=-1), dim=1)"),
            ("return torch.cat(x.unbind(1), -1)", "return x.transpose(1, 2).flatten(2)"),
            ("return F.softmax(x, dim=-1)", "return x.softmax(-1)"),
            ("raise ValueError(f'bad {n} and {x.shape}')", "raise ValueError('bad %s and %s' % (tuple(x.shape), n))"),
            ("a = x * y\nunused = a + 1\nb = a - n\nreturn b", "return x * y - n"),
            ("if not (n >= 2 and n % 2 == 0):\n    raise ValueError(n)", "if n % 2 != 0 or n < 2:\n    raise ValueError(n)"),
            ("return x.size(1) + x.shape[1]", "a, b, c = x.shape\nreturn b + b"),
            ("return x / n ** 0.5", "return x.div(torch.sqrt(n))"),
            ("return torch.matmul(x, y.transpose(-2, -1))", "return x @ y.mT"),
            ("return torch.arange(start=0, end=n).float()", "return torch.arange(0, n)")]
    for a, b in same:
        assert sinks(a) == sinks(b), (a, b)
    assert sinks("return x + y") != sinks("return x * y")
    assert sinks("return x.sin()") != sinks("return x.cos()")


def test_a_helper_is_inlined_and_a_setattr_loop_is_unrolled():
    loop = ("from torch import nn\nclass M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
            "        for n in ('q', 'k'):\n            setattr(self, f'{n}_proj', nn.Linear(d, d))\n"
            "    def forward(self, x):\n        return self.q_proj(x) + self.k_proj(x)\n")
    plain = ("from torch import nn\nclass M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
             "        self.a = nn.Linear(d, d)\n        self.b = nn.Linear(d, d)\n"
             "    def forward(self, x):\n        return self._sum(self.a(x), self.b(x))\n"
             "    def _sum(self, p, q):\n        out = p + q\n        return out\n")
    entries = {"M.__init__", "M.forward"}
    assert structural.features(loop, entries) == structural.features(plain, entries) != frozenset()


@pytest.mark.parametrize("code", [
    "def f(x):\n    return " + "-" * 100_000 + "x\n",                # the parser's own recursion
    "def f(x):\n    return x" + " + x" * 20_000 + "\n",             # a 20,000-deep expression tree
    "x = (" * 150 + "1" + ")" * 150 + "\n",                          # deep brackets
    "def f(x):\n    return x +\n",                                   # a syntax error
    "def f(x):\n    return x\x00\n",                                 # a null byte
])
def test_hostile_modules_give_no_features_or_bounded_ones_quickly(code):
    start = time.monotonic()
    feats = structural.features(code)
    assert time.monotonic() - start < 5.0
    assert isinstance(feats, frozenset) and len(feats) <= normalise.MAX_WORK


def test_exponential_inlining_stops_at_the_node_budget():
    """Helpers that each call the previous one twice: 2**40 expansions, cut by MAX_WORK and MAX_INLINE."""
    code = "def h0(x):\n    return x * x\n" + "".join(
        f"def h{i}(x):\n    return h{i - 1}(x) + h{i - 1}(x + 1)\n" for i in range(1, 40)) + "def f(x):\n    return h39(x)\n"
    start = time.monotonic()
    feats = structural.features(code, {"f"})
    assert time.monotonic() - start < 5.0 and len(feats) < normalise.MAX_WORK


def test_a_huge_module_is_refused_by_intake_for_that_student_only(tmp_path):
    from autograder.intake import limits

    good = SETS["attention"]["copied"]
    big = good + "\n" + "y = [1]\n" * (limits.MODULE_MAX_BYTES // 8 + 10)
    result = class_result(tmp_path, "attention", {"ann": good, "bob": SETS["attention"]["copy_api"], "eve": big})
    assert set(result.refused) == {"eve"} and "SubmissionTooLarge" in result.refused["eve"]
    assert structure_of(result, "ann", "bob").flagged


def test_near_the_size_limit_a_module_is_compared_in_bounded_time():
    from autograder.intake import limits

    body = "".join(f"    v{i} = x.view(-1) + {i}\n    x = v{i} * x\n" for i in range(limits.MODULE_MAX_BYTES // 60))
    code = "def f(x):\n" + body + "    return x\n"
    assert len(code) < limits.MODULE_MAX_BYTES
    start = time.monotonic()
    structural.features(code)
    assert time.monotonic() - start < 20.0


def test_report_files_keep_similarity_csv_and_add_the_structure_csv_and_html_section(tmp_path):
    mods = {k: SETS["multi_head_attention"][k] for k in ("copied", "copy_api", "ind_permute")}
    for sid, code in mods.items():
        (tmp_path / "class" / sid).mkdir(parents=True)
        (tmp_path / "class" / sid / "multi_head_attention.py").write_text(code, encoding="utf-8")
    out = tmp_path / "out"
    run = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path / "class"), "--out", str(out),
                                        "--exercise", "multi_head_attention", "--workers", "1", "--no-reference"])
    assert run.exit_code == 0, run.output
    assert "similarity: structure: 1 flagged pair(s) and exercise(s)" in run.output
    code_rows = list(csv.reader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    assert code_rows[0] == list(report.CSV_COLUMNS)
    assert all(float(row[3]) >= matcher.CSV_MIN for row in code_rows[1:])
    rows = list(csv.reader(io.StringIO((out / "similarity-structure.csv").read_text(encoding="utf-8"))))
    assert rows[0] == list(report.STRUCTURE_COLUMNS)
    assert ["copied", "copy_api", "multi_head_attention", "1.0000"] == rows[1][:4] and int(rows[1][4]) >= 25
    html = (out / "similarity.html").read_text(encoding="utf-8")
    assert "Same structure" in html and "<td>structure</td>" in html


def test_nested_unrolled_loops_that_make_no_nodes_still_stop():
    """16**8 iterations of ``pass``: each statement evaluated counts towards MAX_WORK."""
    code = "def f(x):\n" + "".join("    " * (i + 1) + f"for a{i} in ({', '.join(map(str, range(16)))}):\n"
                                   for i in range(8)) + "    " * 9 + "pass\n    return x\n"
    start = time.monotonic()
    assert structural.features(code, {"f"}) == frozenset()
    assert time.monotonic() - start < 10.0
    with pytest.raises(normalise.TooComplex):
        normalise.graph(code, {"f"})


def test_a_large_tuple_moved_in_an_unrolled_loop_is_bounded():
    code = ("import torch\ndef f(x):\n    t = (" + "x, " * 5000 + ")\n    for i in (" + "1, " * 16 + "):\n"
            + "        for j in (" + "1, " * 16 + "):\n            y = torch.cat(t)\n    return y\n")
    start = time.monotonic()
    structural.features(code, {"f"})
    assert time.monotonic() - start < 10.0


def test_the_normaliser_handles_every_module_of_the_kit_and_torch_nn_without_error():
    """No exception but TooComplex from real code of every shape (nested defs, comprehensions,
    decorators, match, star-args, walrus...): the catch-all in ``features`` is a net, not a habit."""
    import torch.nn.modules

    files = [*REPO_ROOT.glob("autograder/**/*.py"), *REPO_ROOT.glob("solutions/*.py"),
             *REPO_ROOT.glob("examples/sample_class/*/*.py"), *Path(torch.nn.modules.__file__).parent.glob("*.py")]
    assert len(files) > 150
    for path in files:
        try:
            normalise.graph(path.read_text(encoding="utf-8", errors="replace"))
        except normalise.TooComplex:
            pass


def test_helpers_as_lambdas_or_static_methods_of_another_class_are_inlined_too():
    """Attacks on the inlining by someone who read it: the helper moved into a lambda bound to a
    local name, or into a static method of a helper class, still computes the same graph."""
    entries = {"f"}
    plain = "import torch\ndef f(x, n):\n    return x.view(2, n, 3).transpose(1, 2).softmax(-1)\n"
    as_lambda = ("import torch\ndef f(x, n):\n    split = lambda t, h: t.view(2, h, 3).transpose(1, 2)\n"
                 "    return torch.softmax(split(x, n), dim=-1)\n")
    as_static = ("import torch\nclass _Heads:\n    @staticmethod\n    def split(t, h):\n"
                 "        return torch.stack(t.chunk(h, dim=-1), dim=1)\n"
                 "def f(x, n):\n    return F.softmax(_Heads.split(x, n), -1)\n")
    shadowed = ("import torch\ndef split(t, h):\n    return t.sum()\ndef f(x, n):\n"
                "    split = lambda t, h: t.view(2, h, 3).transpose(1, 2)\n    return split(x, n).softmax(-1)\n")
    want = structural.features(plain, entries)
    assert want and structural.features(as_lambda, entries) == want
    assert structural.features(as_static, entries) == want
    assert structural.features(shadowed, entries) == want  # the local lambda, not the module's split


def test_neutral_arithmetic_and_reordered_conditions_do_not_hide_a_copy():
    """Further attacks: ``* 1.0`` and ``+ 0.0 * x.sum()`` on live values change only the
    expressions above them; ``a or b`` reordered is the same condition."""
    copied = SETS["multi_head_attention"]["copied"]
    attacked = copied.replace("    q = split_heads(self.q_proj(query), self.num_heads)\n",
                              "    q = split_heads(self.q_proj(query), self.num_heads) * 1.0\n")
    attacked = attacked.replace("    out = self.out_proj(merge_heads(out))\n",
                                "    out = self.out_proj(merge_heads(out)) + 0.0 * query.sum()\n")
    attacked = attacked.replace("        if t.dim() != 3 or t.size(-1) != self.d_model:",
                                "        if t.size(-1) != self.d_model or t.dim() != 3:")
    assert attacked.count("* 1.0") == 1 and "0.0 * query.sum()" in attacked and "or t.dim() != 3" in attacked
    feats = structural.exercise_features({"a": copied, "b": attacked},
                                         (REPO_ROOT / "exercises" / "multi_head_attention.py").read_text(), 2)
    [pair] = structural.exercise_pairs("multi_head_attention", feats)
    assert pair.flagged and 0.8 <= pair.structure < 1.0


def test_a_pair_only_structure_flags_is_shown_whole_side_by_side_and_escaped(tmp_path):
    evil = "</pre><script>alert(1)</script>"
    mods = {"copied": SETS["multi_head_attention"]["copied"] + f"\nNOTE = {evil!r}\n",
            "copy_api": SETS["multi_head_attention"]["copy_api"]}
    result = class_result(tmp_path, "multi_head_attention", mods)
    html = report.render_html(result)
    assert html.count('<details id="structure-') == 1 and "setattr(self, f&#34;{name}_proj&#34;" in html
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;alert(1)" in html
