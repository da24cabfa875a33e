"""Student-side diagnosis (:mod:`autograder.mistakes.diagnosis`): self-check names formula-level mistakes
without the reference or the catalog.

The unit tests check the registry and the matcher; the edition test releases the student edition
(``tkit release``), plants submissions with known mistakes (the catalog's patches, applied here on
the instructor side) and runs the edition's own ``tkit check`` on them: each mistake must be named,
in English and in Korean, and the edition must still pass the leak scan.
"""

import contextlib
import json
import os
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner
from markupsafe import escape

import cli
from autograder import context, exercises
from autograder.checks import expectations
from autograder.checks import formulas, mistaken, oracles, seq2seq_loss, weights
from autograder.exports import release
from autograder.i18n import using
from autograder.mistakes import catalog, diagnosis

from conftest import SOLUTIONS_DIR

# (mistakes planted together, exercises checked): three self-checks cover the formula-level mistakes
# the issue lists. A planted mistake may break its neighbours' other tests (MHA calls masked_softmax),
# but each is still named by a test that does not depend on the others.
PLANTED = [
    (("mask_softmax_polarity_inverted", "mha_split_without_transpose", "pe_sin_cos_swapped"),
     ("masks", "multi_head_attention", "positional_encoding")),
    (("mask_causal_diagonal_masked", "encoder_always_pre_ln", "decoder_always_post_ln", "embedding_no_scale"),
     ("masks", "encoder", "decoder", "embedding")),
    (("mask_softmax_wrong_axis", "attention_no_scaling"), ("masks", "attention")),
]


def test_known_mistakes_carry_the_catalog_ids_exercises_and_conventions():
    for known in diagnosis.KNOWN.values():
        assert known.exercise in exercises.NAMES, known.id
        with using("en"):
            en = known.hint()
        with using("ko"):
            ko = known.hint()
        assert en == known.hint_en and ko == known.hint_ko and ko and en and ko != en, known.id
        mutant = catalog.by_id(known.id)  # the same name in both editions
        assert (mutant.exercise, mutant.convention) == (known.exercise, known.convention), known.id


def test_every_variant_id_is_known():
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    state = {f"{n}.{p}": torch.randn(4, 4) if p == "weight" else torch.randn(4)
             for n in ("q_proj", "k_proj", "v_proj", "out_proj") for p in ("weight", "bias")}
    built = [mistaken.pe_table(5, 4), mistaken.causal_mask(3), mistaken.padding_mask(torch.tensor([[0, 1]]), 0),
             mistaken.masked_softmax(x, x > 0), mistaken.attention(x, x, x, x > 0),
             mistaken.mha(state, 2, x, x, x), mistaken.split_merge(x, 2, x.reshape(2, 2, 3, 2)),
             mistaken.embedding(torch.randn(5, 4), torch.tensor([1, 2])), mistaken.rope(x), mistaken.rope_angles(4, 3),
             mistaken.ffn_shapes(4), mistaken.fused_projections(4),
             seq2seq_loss.loss_mistakes(x, torch.tensor([[1, 0, 0], [2, 3, 0]]), 0, 0.1),
             seq2seq_loss.shift_mistakes(torch.tensor([[1, 2, 3]]))]
    ids = {key for variants in built for key in variants}
    assert ids <= set(diagnosis.KNOWN)
    assert {"pe_sin_cos_swapped", "attention_no_scaling", "mha_split_without_transpose"} <= ids
    assert {"seq2seq_smoothing_on_pad", "seq2seq_shift_wrong_side"} <= ids


def test_the_variant_builders_without_a_mistake_give_the_public_oracles():
    gen = torch.Generator().manual_seed(3)
    x, memory = torch.randn(2, 5, 12, generator=gen), torch.randn(2, 4, 12, generator=gen)
    kpm = torch.tensor([[False, False, True, True], [False, False, False, True]])
    state = weights.mha_state(gen, 12)
    for average in (True, False):
        torch.testing.assert_close(
            mistaken._mha(state, 3, x, memory, memory, key_padding_mask=kpm, average=average),
            oracles.mha_forward(state, 12, 3, x, memory, memory, key_padding_mask=kpm,
                                average_attn_weights=average), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(mistaken._pe(9, 6), formulas.sinusoidal_table(9, 6))
    torch.testing.assert_close(mistaken._attention(x, memory, memory, kpm[:, None, :]),
                               formulas.attention(x, memory, memory, kpm[:, None, :]))
    rope_x = torch.randn(2, 3, 6, 8, generator=gen)
    torch.testing.assert_close(mistaken._rotate(rope_x, halves=False, clockwise=False), formulas.apply_rope(rope_x))


def test_name_picks_the_matching_variant_and_nothing_else():
    table = formulas.sinusoidal_table(6, 4)
    variants = mistaken.pe_table(6, 4)
    swapped = variants["pe_sin_cos_swapped"]()
    assert diagnosis.name(swapped, variants, atol=1e-5, rtol=0).id == "pe_sin_cos_swapped"
    assert diagnosis.name(variants["pe_integer_exponent"](), variants, atol=1e-5, rtol=0).id == "pe_integer_exponent"
    assert diagnosis.name(table * 2, variants, atol=1e-5, rtol=0) is None   # wrong, but not a known mistake
    broken = {"pe_sin_cos_swapped": lambda: 1 / 0}   # a variant that cannot be built is skipped
    assert diagnosis.name(swapped, broken, atol=1e-5, rtol=0) is None


def test_expect_reference_falls_back_on_the_known_mistakes():
    """``expect_reference`` (the kit's reference from :mod:`autograder.mistakes.implementations`)
    still reads its ``known_mistakes=`` argument when the catalog names nothing (a local import
    once shadowed it: every unnamed mismatch became a grader error)."""
    from autograder.mistakes import implementations

    assert context.current(required=False) is None   # outside a graded test: no catalog search, identify gives None
    wrong = implementations.reference().positional_encoding.sinusoidal_table(6, 4) * 2
    known = mistaken.pe_table(6, 4)
    with pytest.raises(expectations.Mismatch) as caught:
        expectations.expect_reference(
            lambda impl: impl.positional_encoding.sinusoidal_table(6, 4) if impl != "student" else wrong,
            "student", what="PE", known_mistakes=known)
    assert caught.value.mistake is None     # wrong, but no known mistake: named nothing, raised no other error
    swapped = known["pe_sin_cos_swapped"]()
    with pytest.raises(expectations.Mismatch) as caught:
        expectations.expect_reference(
            lambda impl: impl.positional_encoding.sinusoidal_table(6, 4) if impl != "student" else swapped,
            "student", what="PE", known_mistakes=known)
    assert caught.value.mistake.id == "pe_sin_cos_swapped"


def test_flipped_norm_is_the_other_convention():
    layer = oracles.torch_layer("encoder", 8, 2, 12, norm_first=False, rng=torch.Generator().manual_seed(1))
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(2))
    (key, make), = mistaken.flipped_norm("encoder", layer, False, x).items()
    pre = oracles.torch_layer("encoder", 8, 2, 12, norm_first=True, rng=torch.Generator().manual_seed(1))
    assert key == "encoder_always_pre_ln"
    torch.testing.assert_close(make(), oracles.run(pre, x))
    assert layer.norm_first is False   # the test's own oracle is left alone


def test_expected_values_are_shown_in_public_tests_only():
    got, expected = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0])
    for visibility, shown in (("public", True), ("hidden", False), (None, False), ("outside a test", False)):
        running = context.running(context.TestContext(visibility=visibility)) if visibility != "outside a test" \
            else contextlib.nullcontext()
        with running, pytest.raises(expectations.Mismatch) as caught:
            expectations.compare(got, expected, what="x")
        assert ("where you returned 2), expected 2.5, largest difference 0.5" in str(caught.value)) == shown
        assert "where you returned 2)" in str(caught.value)


def _plant(folder, mistake_ids):
    """Write the reference modules into ``folder`` with the planted mistakes' patches applied."""
    folder.mkdir(parents=True)
    sources = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS_DIR.glob("*.py")}
    for mistake_id in mistake_ids:
        mutant = catalog.by_id(mistake_id)
        sources[mutant.target] = mutant.source(sources[mutant.target])
    for name, text in sources.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


def _check(edition, folder, names, lang):
    env = {k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "PYTHONPATH")}
    env.update(COLUMNS="200", TKIT_LANG=lang)
    out = folder.parent / f"{folder.name}-{lang}.json"
    html = out.with_suffix(".html")
    run = subprocess.run([sys.executable, "cli.py", "check", *names, "--path", str(folder), "--json", str(out),
                          "--html", str(html), "--lang", lang], cwd=edition, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    return json.loads(out.read_text(encoding="utf-8")), run.stdout, html.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_student_edition_names_formula_level_mistakes(tmp_path):
    edition = tmp_path / "student"
    made = CliRunner().invoke(cli.main, ["release", "--out", str(edition)])
    assert made.exit_code == 0, made.output
    assert not (edition / "autograder" / "mistakes" / "catalog").exists() and not (edition / "solutions").exists()
    assert (edition / "autograder" / "mistakes" / "diagnosis.py").is_file()
    assert release.reference_material(edition, SOLUTIONS_DIR) == []
    where = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"], cwd=edition,
                           capture_output=True, text=True, check=True,
                           env={k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "PYTHONPATH")})
    assert where.stdout.strip() == str(edition / "autograder" / "__init__.py")

    shown = []
    for i, (planted, names) in enumerate(PLANTED):
        folder = tmp_path / f"submission{i}"
        _plant(folder, planted)
        lang = "ko" if i == 0 else "en"
        results, stdout, html = _check(edition, folder, names, lang)
        named = {t["extra_data"].get("mistake") for t in results["tests"] if t["status"] == "failed"}
        assert set(planted) <= named, (planted, named, stdout)
        for mistake_id in planted:
            with using(lang):
                hint = diagnosis.KNOWN[mistake_id].hint()
            outputs = [t["output"] for t in results["tests"] if t["extra_data"].get("mistake") == mistake_id]
            assert any(hint in output for output in outputs), (mistake_id, outputs[:1])
            assert str(escape(hint)) in html   # the --html report names it too (it crashed in this edition)
        shown += [line for t in results["tests"] for line in t["output"].splitlines()
                  if " has wrong values at " in line or "곳에서 틀립니다" in line]
    # public messages show the expected value at the first mismatch (the formula is public)
    assert shown and all(", expected " in line or "기대값" in line for line in shown), shown
