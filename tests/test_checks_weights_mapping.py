"""The contract's structure under other names: the correspondence rule
(:mod:`autograder.checks.renaming`), loading under the student's names and the names test
(:mod:`autograder.checks.weights`), and gradings of tutorial-style renamed submissions
(``tests/renamed_submissions.py``): only the names test loses its points, and a real mistake is
still named.
"""

import math
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from autograder import context
from autograder.checks import renaming, weights
from autograder.reports import causes
from autograder.sandbox.errors import SubmissionError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import renamed_submissions  # noqa: E402

SEED = 20240901


def lay(module: nn.Module):
    return renaming.layout_of(module.state_dict())


class Linears(nn.Module):
    """The Annotated Transformer's multi-head attention parameters: ``linears[0..3]``."""

    def __init__(self, d, order=(0, 1, 2, 3)):
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(d, d) for _ in order)


class Kit(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))


class HandNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(d))
        self.b_2 = nn.Parameter(torch.zeros(d))


# -- the rule ---------------------------------------------------------------------------------------
def test_unique_correspondence_by_shape_and_order():
    pairs = renaming.correspond(lay(Kit(4)), lay(Linears(4)), strict=True)
    assert pairs == {"q_proj.weight": "linears.0.weight", "q_proj.bias": "linears.0.bias",
                     "k_proj.weight": "linears.1.weight", "k_proj.bias": "linears.1.bias",
                     "v_proj.weight": "linears.2.weight", "v_proj.bias": "linears.2.bias",
                     "out_proj.weight": "linears.3.weight", "out_proj.bias": "linears.3.bias"}
    assert renaming.renamed_attributes(pairs) == ["linears.0 -> q_proj", "linears.1 -> k_proj",
                                                   "linears.2 -> v_proj", "linears.3 -> out_proj"]


def test_same_names_pair_by_name_whatever_the_registration_order():
    contract = [("q_proj.weight", (4, 4)), ("out_proj.weight", (4, 4))]
    student = [("out_proj.weight", (4, 4)), ("q_proj.weight", (4, 4))]
    assert renaming.correspond(contract, student) == {"q_proj.weight": "q_proj.weight",
                                                      "out_proj.weight": "out_proj.weight"}


def test_leaves_of_other_kinds_may_come_in_any_order():
    """A norm registered before the attention still finds norm1: leaves are grouped by signature."""
    contract = lay(Kit(4)) + [("norm1.weight", (4,)), ("norm1.bias", (4,))]
    student = [("ln.a_2", (4,)), ("ln.b_2", (4,))] + lay(Linears(4))
    pairs = renaming.correspond(contract, student, strict=True)
    assert pairs["norm1.weight"] == "ln.a_2" and pairs["norm1.bias"] == "ln.b_2"
    assert pairs["q_proj.weight"] == "linears.0.weight"
    assert "ln.a_2 -> norm1.weight" in renaming.renamed_attributes(pairs)


def test_nested_composite_names_and_ownership():
    """An encoder layer holding an Annotated-style attention and norms: the renames under
    self_attn are multi_head_attention's, the norms the encoder's own."""
    contract = [(f"self_attn.{k}", s) for k, s in lay(Kit(4))] + \
        [("feed_forward.linear1.weight", (6, 4)), ("feed_forward.linear1.bias", (6,)),
         ("feed_forward.linear2.weight", (4, 6)), ("feed_forward.linear2.bias", (4,)),
         ("norm1.weight", (4,)), ("norm1.bias", (4,)), ("norm2.weight", (4,)), ("norm2.bias", (4,))]
    student = [(f"self_attn.{k}", s) for k, s in lay(Linears(4))] + \
        [("feed_forward.linear1.weight", (6, 4)), ("feed_forward.linear1.bias", (6,)),
         ("feed_forward.linear2.weight", (4, 6)), ("feed_forward.linear2.bias", (4,)),
         ("sublayer.0.norm.a_2", (4,)), ("sublayer.0.norm.b_2", (4,)),
         ("sublayer.1.norm.a_2", (4,)), ("sublayer.1.norm.b_2", (4,))]
    pairs = renaming.correspond(contract, student, strict=True)
    assert pairs["norm2.bias"] == "sublayer.1.norm.b_2"
    assert pairs["feed_forward.linear2.bias"] == "feed_forward.linear2.bias"   # anchored by name
    assert renaming.renamed_attributes(pairs, "encoder") == [
        "sublayer.0.norm.a_2 -> norm1.weight", "sublayer.0.norm.b_2 -> norm1.bias",
        "sublayer.1.norm.a_2 -> norm2.weight", "sublayer.1.norm.b_2 -> norm2.bias"]
    assert renaming.renamed_attributes(pairs, "multi_head_attention")[0] == "linears.0 -> q_proj"
    # a stack of two: the layer's renames read the same (deduplicated), the final norm's with its owner
    stack_c = [(f"layers.{i}.{k}", s) for i in range(2) for k, s in contract] + [("norm.weight", (4,)),
                                                                                 ("norm.bias", (4,))]
    stack_s = [(f"layers.{i}.{k}", s) for i in range(2) for k, s in student] + [("norm.a_2", (4,)),
                                                                                ("norm.b_2", (4,))]
    renamed = renaming.renamed_attributes(renaming.correspond(stack_c, stack_s, strict=True), "encoder")
    assert renamed == ["sublayer.0.norm.a_2 -> norm1.weight", "sublayer.0.norm.b_2 -> norm1.bias",
                       "sublayer.1.norm.a_2 -> norm2.weight", "sublayer.1.norm.b_2 -> norm2.bias",
                       "norm.a_2 -> norm.weight", "norm.b_2 -> norm.bias"]


def test_buffers_such_as_pe():
    pairs = renaming.correspond([("pe", (1, 20, 8))], [("table", (1, 20, 8))], strict=True)
    assert renaming.renamed_attributes(pairs) == ["table -> pe"]
    with pytest.raises(renaming.NoCorrespondence):   # another layout of the table is not a renaming
        renaming.correspond([("pe", (1, 20, 8))], [("table", (20, 8))])
    inside = renaming.correspond([("pos_encoding.pe", (1, 5, 4))], [("pos_encoding.table", (1, 5, 4))])
    assert renaming.renamed_attributes(inside, "transformer") == []
    assert renaming.renamed_attributes(inside, "positional_encoding") == ["pos_encoding.table -> pos_encoding.pe"]


def test_count_mismatch_and_another_structure_are_refused_extra_parameters_are_left_out():
    three = [(k, s) for k, s in lay(Linears(4)) if not k.startswith("linears.3")]
    with pytest.raises(renaming.NoCorrespondence, match="has 4 of"):
        renaming.correspond(lay(Kit(4)), three)
    extra = lay(Linears(4)) + [("scale", (1,))]   # the student's own parameter: it keeps its value
    pairs = renaming.correspond(lay(Kit(4)), extra, strict=True)
    assert "scale" not in pairs.values() and len(pairs) == 8
    fused = [("in_proj_weight", (12, 4)), ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)),
             ("out_proj.bias", (4,))]
    with pytest.raises(renaming.NoCorrespondence, match="in_proj"):   # not extra: q/k/v have no counterpart
        renaming.correspond(lay(Kit(4)), fused)


def test_strict_refuses_what_the_student_lacks_and_lenient_leaves_it_out():
    contract = lay(Kit(4)) + [("norm.weight", (4,)), ("norm.bias", (4,))]
    assert len(renaming.correspond(contract, lay(Linears(4)))) == 8
    with pytest.raises(renaming.NoCorrespondence, match="nothing for norm"):
        renaming.correspond(contract, lay(Linears(4)), strict=True)


def test_shape_collision_pairs_in_registration_order():
    """d_ff == d_model: linear1 and linear2 have one signature; the order of registration decides,
    so a module that registers its second layer first gets swapped weights (its output then differs:
    a wrong correspondence can only cost the student, never pay)."""
    contract = [("linear1.weight", (4, 4)), ("linear1.bias", (4,)), ("linear2.weight", (4, 4)), ("linear2.bias", (4,))]
    student = [("w_2.weight", (4, 4)), ("w_2.bias", (4,)), ("w_1.weight", (4, 4)), ("w_1.bias", (4,))]
    assert renaming.correspond(contract, student)["linear1.weight"] == "w_2.weight"


def test_a_hand_written_norm_registered_bias_first_gets_the_values_swapped():
    """Inside a leaf the tensors pair in order too: b_2 before a_2 maps weight -> b_2 (the output differs)."""
    pairs = renaming.correspond([("norm.weight", (4,)), ("norm.bias", (4,))], [("norm.b", (4,)), ("norm.g", (4,))])
    assert pairs == {"norm.weight": "norm.b", "norm.bias": "norm.g"}


# -- loading ------------------------------------------------------------------------------------------
def test_load_maps_the_state_onto_the_students_names_and_notes_it():
    state = {k: torch.randn(v.shape) for k, v in Kit(4).state_dict().items()}
    module = Linears(4)
    ctx = context.TestContext(exercise="multi_head_attention", nodeid="t::x")
    with context.running(ctx):
        weights.loaded(module, state)   # strict
    assert torch.equal(module.linears[3].bias, state["out_proj.bias"])
    assert ctx.run.renamed["t::x"][0] == "linears.0 -> q_proj"


def test_contract_names_load_as_before():
    state = {k: torch.randn(v.shape) for k, v in Kit(4).state_dict().items()}
    ctx = context.TestContext(exercise="multi_head_attention", nodeid="t::y")
    with context.running(ctx):
        module = weights.loaded(Kit(4), state)
    assert torch.equal(module.q_proj.weight, state["q_proj.weight"]) and ctx.run.renamed == {}
    with pytest.raises(SubmissionError, match="nothing for the exercise's extra.weight") as raised:   # strict: a key
        weights.loaded(Kit(4), {**state, "extra.weight": torch.zeros(1)})                        # the module lacks
    assert raised.value.kind == "names"


def test_no_correspondence_is_one_cause_of_kind_names():
    state = {k: torch.randn(v.shape) for k, v in Kit(4).state_dict().items()}
    odd = Linears(4)
    odd.linears[3] = nn.Linear(4, 1)   # another structure: one projection the exercise has nowhere
    with pytest.raises(SubmissionError) as first:
        weights.loaded(odd, state)
    with pytest.raises(SubmissionError) as second:
        weights.loaded(odd, {k: v.double() for k, v in state.items()}, "Linears")
    assert first.value.kind == second.value.kind == "names" and "names" in causes.KINDS
    line = first.value.message.splitlines()[0]
    assert line == second.value.message.splitlines()[0]          # one cause in the report
    # the extra buffer is the module's own (allowed); the projection of another shape is the cause
    assert line == "Linears: linears.3.weight, linears.3.bias do not correspond to the exercise's parameters"
    assert "linears.3.weight [1, 4], linears.3.bias [1]" in first.value.message


def test_extra_parameters_and_a_shared_sublayer_under_two_names_load_as_the_contract_says():
    """Legitimate forms (exercises/README.md): a module that also holds its four projections in a
    ``linears`` list, and one with a buffer of its own, load the state under the contract's names and
    keep their own entries; the names test passes."""
    class Shared(Kit):
        def __init__(self, d):
            super().__init__(d)
            self.linears = nn.ModuleList([self.q_proj, self.k_proj, self.v_proj, self.out_proj])
            self.register_buffer("scale", torch.tensor(float(d) ** 0.5))

    state = {k: torch.randn(v.shape) for k, v in Kit(4).state_dict().items()}
    module = weights.loaded(Shared(4), state)
    assert torch.equal(module.linears[0].weight, state["q_proj.weight"]) and float(module.scale) == 2.0
    assert sorted(weights.layout(module, prefer=state)) == sorted(renaming.layout_of(state) + [("scale", ())])
    weights.expect_names(lambda impl: Shared(4), None, state, what="Shared(4)")


def test_a_malicious_layout_can_only_misplace_the_graders_own_weights():
    """A module whose state_dict() reports names it does not have: the grader loads its own state
    under those names, the student's module does not take them (strict) and the kit says so: one
    structure message, nothing else happens."""
    class Liar(Kit):
        def state_dict(self, *args, **kwargs):
            return {f"fake{i}.weight": torch.zeros(4, 4) for i in range(4)} | {
                f"fake{i}.bias": torch.zeros(4) for i in range(4)}

    state = {k: torch.randn(v.shape) for k, v in Kit(4).state_dict().items()}
    with pytest.raises(SubmissionError) as raised:
        weights.loaded(Liar(4), {k.replace("q_proj", "query"): v for k, v in state.items()})
    assert raised.value.kind == "names" and "Liar:" in raised.value.message


# -- names test ---------------------------------------------------------------------------------------
def _names_test(build, state, exercise):
    with context.running(context.TestContext(exercise=exercise, nodeid="t::names")):
        weights.expect_names(build, None, state, what="M")


def test_expect_names_passes_contract_names_and_names_each_rename():
    state = Kit(4).state_dict()
    _names_test(lambda _: Kit(4), state, "multi_head_attention")
    with pytest.raises(AssertionError, match=r"linears\.0 -> q_proj, linears\.1 -> k_proj"):
        _names_test(lambda _: Linears(4), state, "multi_head_attention")


def test_expect_names_does_not_count_a_components_renames():
    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn = Linears(4)
            self.norm1 = nn.LayerNorm(4)

    class KitLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn = Kit(4)
            self.norm1 = nn.LayerNorm(4)

    _names_test(lambda _: Layer(), KitLayer().state_dict(), "encoder")   # multi_head_attention's names test counts it
    with pytest.raises(AssertionError, match="a_2 -> norm1.weight"):
        class HandLayer(Layer):
            def __init__(self):
                super().__init__()
                del self.norm1
                self.ln = HandNorm(4)
        _names_test(lambda _: HandLayer(), KitLayer().state_dict(), "encoder")


def test_expect_names_without_correspondence():
    fused = nn.Module()
    fused.in_proj_weight = nn.Parameter(torch.zeros(12, 4))
    with pytest.raises(SubmissionError, match="in_proj_weight"):
        _names_test(lambda _: fused, Kit(4).state_dict(), "multi_head_attention")
    with context.running(context.TestContext(exercise="multi_head_attention", nodeid="t::n")):
        weights.expect_names(lambda _: fused, None, Kit(4).state_dict(), what="M", unmatched=False)   # left to the test


# -- gradings of tutorial-style submissions ------------------------------------------------------------
EXPECTED = {   # case -> (exercise, points, the test that loses them, a mistake named elsewhere or None)
    "embedding_lut": ("embedding", 4.75, "test_attribute_names", None),
    "mha_linears": ("multi_head_attention", 11.5, "test_named_projections", None),
    "ffn_w12": ("feed_forward", 4.5, "test_layer_shapes", None),
    "encoder_annotated_norm": ("encoder", 9.75, "test_attribute_names", None),
    "embedding_lut_no_scale": ("embedding", None, "test_attribute_names", "embedding_no_scale"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(EXPECTED))
def test_renamed_submission_loses_only_the_names_test(case, tmp_path):
    from grading_runs import run_suites

    exercise, points, names_test, mistake = EXPECTED[case]
    folder = renamed_submissions.build(tmp_path / case, case)
    results = run_suites(folder, names=[exercise], seed=SEED, training=False)
    tests = [t for t in results["tests"] if t["tags"][0] == exercise]
    failed = [t for t in tests if t["score"] < t["max_score"]]
    names = [t for t in failed if t["extra_data"]["nodeid"].endswith(names_test)]
    assert len(names) == 1 and "->" in names[0]["output"] and names[0]["score"] == 0
    if mistake is None:
        assert failed == names, [t["name"] for t in failed]
        assert sum(t["score"] for t in tests) == points
    else:
        assert {t["extra_data"].get("mistake") for t in failed} >= {mistake}
        value_failures = [t for t in failed if t not in names and t["status"] == "failed"
                          and t["visibility"] == "visible"]   # a hidden test's output is sealed
        assert value_failures and all("matched to the exercise's by shape" in t["output"] for t in value_failures)
        # never more than the same mistake under the contract's names (the catalog's mutant)
        from autograder.mistakes import catalog

        plain = tmp_path / "plain"
        renamed_submissions.build(plain, "embedding_lut")
        (plain / f"{exercise}.py").write_text(catalog.by_id(mistake).source(), encoding="utf-8")
        contract = run_suites(plain, names=[exercise], seed=SEED, training=False)
        names_there = [t["score"] for t in contract["tests"] if t["extra_data"]["nodeid"].endswith(names_test)]
        assert math.isclose(sum(t["score"] for t in tests), sum(t["score"] for t in contract["tests"]) - names_there[0],
                            abs_tol=1e-3)


# -- the Transformer's rigged generator and its trained weights ----------------------------------------
def test_generator_found_under_another_name():
    from autograder.checks import seq2seq

    state = {"src_embed.lut.weight": torch.zeros(13, 16), "tgt_embed.lut.weight": torch.zeros(11, 16),
             "ffn.w_1.weight": torch.zeros(24, 16), "ffn.w_1.bias": torch.zeros(24),
             "generator.proj.weight": torch.zeros(11, 16), "generator.proj.bias": torch.zeros(11)}
    assert seq2seq.generator_keys(state) == ("generator.proj.weight", "generator.proj.bias")
    assert seq2seq.generator_keys({"generator.weight": 0, "generator.bias": 0}) == ("generator.weight", "generator.bias")
    two = {**state, "extra.weight": torch.zeros(11, 16), "extra.bias": torch.zeros(11)}
    with pytest.raises(SubmissionError) as exc:
        seq2seq.generator_keys(two)
    assert exc.value.kind == "names"


def test_trained_transformer_weights_under_other_names_reach_the_reference():
    """The training check's second measure (the reference carrying the trained weights) maps the
    student's names too: the same accuracy and loss as under the contract's names."""
    from autograder.checks import transformer_training as tt
    from autograder.mistakes import implementations

    budget = tt.TransformerBudget(n_heldout=40)
    torch.manual_seed(3)
    state = implementations.reference().transformer.Transformer(**budget.config()).state_dict()
    _, _, held_src, held_tgt = tt.draw_task(budget, 5)
    rename = {"generator.": "out.", "src_embed.embedding": "src_embed.lut", "tgt_embed.embedding": "tgt_embed.lut"}

    def renamed(key):
        for old, new in rename.items():
            key = key.replace(old, new)
        return key

    theirs = {renamed(k): v for k, v in state.items() if k != "pos_encoding.pe"}
    theirs["pos_encoding.table"] = state["pos_encoding.pe"]   # buffers come after the parameters
    plain = tt._reference_measures(dict(state), budget, held_src, held_tgt)
    mapped = tt._reference_measures(theirs, budget, held_src, held_tgt)
    assert mapped.note in (None, "") and (mapped.accuracy, mapped.loss) == (plain.accuracy, plain.loss)


@pytest.mark.slow
def test_no_correspondence_is_said_once_in_the_report(tmp_path):
    """The feed-forward block with a third layer of w_1's shape (which layer plays linear1 is then a
    guess): every test that loads weights fails with the same first line, and the report shows it as
    one cause (before: one API message per test). Only the public tests show it: a hidden test's
    output is sealed."""
    from autograder.run import grading

    folder = tmp_path / "extra"
    renamed_submissions.build(folder, "ffn_w12")
    path = folder / "feed_forward.py"
    path.write_text(renamed_submissions.patched(path.read_text(encoding="utf-8"), (
        ("        self.dropout = nn.Dropout(dropout)\n",
         "        self.dropout = nn.Dropout(dropout)\n        self.w_3 = nn.Linear(d_model, d_ff)\n"),)),
        encoding="utf-8")
    results = grading.grade_folder(folder, names=["feed_forward"], seed=SEED, training=False)
    found, which = causes.of_tests(results.tests)
    names = [c for c in found if c["kind"] == "names"]
    public_loading = [t for t in results.tests if t.visibility == "visible" and "do not correspond" in (t.output or "")]
    assert len(names) == 1 and names[0]["count"] == len(public_loading) >= 2
    assert names[0]["output"].startswith("PositionwiseFeedForward: w_1.weight, w_1.bias, w_2.weight, w_2.bias, "
                                         "w_3.weight, w_3.bias do not correspond to the exercise's parameters")
    assert "Yours: w_1.weight [10, 6], w_1.bias [10], w_2.weight [6, 10]" in names[0]["output"]


@pytest.mark.slow
def test_composites_own_mistake_in_renamed_code_is_named_through_the_hybrid(tmp_path):
    """The Annotated-style encoder with the attention residual lost: the hybrid re-run (its own file
    on the reference components, loaded under its names) still names the encoder's mistake, and it
    earns what the contract-named mutant earns, less what the names test earned there."""
    from autograder.mistakes import catalog
    from grading_runs import run_suites

    mistake = "encoder_attention_residual_missing"
    folder = renamed_submissions.build(tmp_path / "renamed", "encoder_annotated_norm", mistake)
    results = run_suites(folder, names=["encoder"], seed=SEED, training=False)
    assert mistake in {t["extra_data"].get("mistake") for t in results["tests"]}
    plain = tmp_path / "plain"
    renamed_submissions.build(plain, "embedding_lut")
    (plain / "encoder.py").write_text(catalog.by_id(mistake).source(), encoding="utf-8")
    contract = run_suites(plain, names=["encoder"], seed=SEED, training=False)
    names = [t["score"] for t in contract["tests"] if t["extra_data"]["nodeid"].endswith("test_attribute_names")]
    assert names and math.isclose(sum(t["score"] for t in results["tests"]),
                                  sum(t["score"] for t in contract["tests"]) - names[0], abs_tol=1e-3)


@pytest.mark.slow
def test_a_renamed_components_mistake_is_blamed_on_it_in_the_composite(tmp_path):
    """linears[0..3] with heads split without a transpose: named on multi_head_attention; the
    encoder (its own file right) blames multi_head_attention."""
    from grading_runs import run_suites

    folder = renamed_submissions.build(tmp_path / "sub", "mha_linears", "mha_split_without_transpose")
    results = run_suites(folder, names=["multi_head_attention", "encoder"], visibility=("public",), seed=SEED,
                         training=False)
    failing = [t for t in results["tests"] if t["status"] == "failed"]   # not the tests the values gate paid less
    mha = {t["extra_data"].get("mistake") for t in failing if t["tags"][0] == "multi_head_attention"}
    assert "mha_split_without_transpose" in mha
    encoder = [t for t in failing if t["tags"][0] == "encoder"]
    assert encoder and all(t["extra_data"].get("components_at_fault") == ["multi_head_attention"]
                           or t["extra_data"].get("mistake") == "mha_split_without_transpose" for t in encoder)
    assert not any(t["extra_data"]["nodeid"].endswith("test_attribute_names") for t in encoder)


def test_permuted_registration_order_costs_the_student_never_pays():
    """An attention-like module that registers its output layer first (w_o, w_q) but uses each in
    its role: the correspondence by order puts q_proj's weights into w_o, so its output differs
    from the contract-named module's: the value tests fail, the names test too (never more points)."""
    class Kit2(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.out_proj = nn.Linear(4, 4), nn.Linear(4, 4)

        def forward(self, x):
            return self.out_proj(torch.relu(self.q_proj(x)))

    class Permuted(nn.Module):
        def __init__(self):
            super().__init__()
            self.w_o, self.w_q = nn.Linear(4, 4), nn.Linear(4, 4)

        def forward(self, x):
            return self.w_o(torch.relu(self.w_q(x)))

    gen = torch.Generator().manual_seed(1)
    state = {k: torch.randn(v.shape, generator=gen) for k, v in Kit2().state_dict().items()}
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    want = weights.loaded(Kit2(), state)(x)
    with context.running(context.TestContext(exercise="multi_head_attention", nodeid="t::p")):
        got = weights.loaded(Permuted(), state)(x)
    assert not torch.allclose(got, want)
    swapped = {"q_proj.weight": state["out_proj.weight"], "q_proj.bias": state["out_proj.bias"],
               "out_proj.weight": state["q_proj.weight"], "out_proj.bias": state["q_proj.bias"]}
    assert torch.allclose(got, weights.loaded(Kit2(), swapped)(x))   # exactly the order rule, nothing else
