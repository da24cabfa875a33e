"""Hidden failures explained on kit-fixed public inputs (:mod:`autograder.run.counterexample_run`,
:mod:`autograder.checks.probes`): every probe of an exercise with a failed hidden test runs in a
fresh child after the hidden tests, and the mistake that reproduces the student's value on a probe
is what the sealed hidden test shows (:mod:`autograder.results.withheld`). Nothing of it may depend
on a hidden input: the same line under two run seeds whose hidden inputs differ, and no hidden
value in any output a student sees."""

import json
import re
from pathlib import Path

import pytest

from autograder import paths
from autograder.checks import probes
from autograder.mistakes import catalog
from autograder.reports import counterexamples, render
from autograder.results.model import Results, TestResult, as_results
from autograder.run import counterexample_run, grading
from grading_runs import run_suites

SUITE = Path(__file__).parent / "data" / "hidden_only_suite.py"
MISTAKE = "pe_exponent_i_over_d"


def _test(name, hidden, status="failed", mistake=None, **extra):
    return TestResult(name=f"positional_encoding: {name}", score=0.0 if status == "failed" else 1.0, max_score=1.0,
                      status=status, visibility="after_published" if hidden else "visible",
                      tags=["positional_encoding"], mistake=mistake, output=f"{name} output", **extra)


def test_probes_are_module_constants_that_tell_each_chosen_mistake_apart():
    """The probe for a mistake depends on the mistake alone, and its mutant differs from the
    reference on it (so a student with that mistake sees a difference)."""
    from autograder.mistakes import implementations

    probe = probes.for_mistake(MISTAKE)
    assert probe is not None and probe.exercise == "positional_encoding"
    mutant = catalog.by_id(MISTAKE).impl()
    assert probes.differs(probe.run(mutant), probe.run(implementations.reference()))
    assert probes.for_mistake("not_a_catalog_id") is None
    # coverage of the exercises with probes (measured: 51 of their 64 mutants)
    covered = [m for m in catalog.all_mutants() if probes.of_exercise(m.exercise) and probes.for_mistake(m.id)]
    assert len(covered) >= 50


def test_the_probed_exercises_follow_the_statuses_alone():
    """Which exercises are probed depends on which failed a graded hidden test, never on the
    mistake a hidden test named (that would let hidden inputs choose what runs)."""
    named = _test("hidden a", True, mistake="pe_sin_cos_swapped")
    unnamed = TestResult(name="masks: hidden", score=0.0, max_score=1.0, status="failed",
                         visibility="after_published", tags=["masks"])
    passed = TestResult(name="rope: hidden", score=1.0, max_score=1.0, status="passed",
                        visibility="after_published", tags=["rope"])
    composite = TestResult(name="encoder: hidden", score=0.0, max_score=1.0, status="failed",
                           visibility="after_published", tags=["encoder"])   # no probes of its own
    public = _test("public", False, mistake="pe_sin_cos_swapped")
    assert counterexample_run.to_probe([public, named, unnamed, passed, composite]) == ["positional_encoding", "masks"]
    named.mistake = "pe_positions_from_one"
    assert counterexample_run.to_probe([public, named, unnamed, passed, composite]) == ["positional_encoding", "masks"]


def test_a_probe_names_the_mistake_that_reproduces_the_value_on_it():
    probe = probes.for_mistake(MISTAKE)
    assert counterexample_run.reproducing(probe, probe.run(catalog.by_id(MISTAKE).impl())).id == MISTAKE
    pair = catalog.by_id("pe_sin_cos_swapped+pe_positions_from_one")
    assert counterexample_run.reproducing(probe, probe.run(pair.impl())).id == pair.id
    assert counterexample_run.reproducing(probe, probe.run(catalog.by_id(MISTAKE).impl()) * 3) is None


def test_a_correct_value_on_the_probe_gives_no_line():
    from autograder.mistakes import implementations

    probe = probes.for_mistake(MISTAKE)
    assert counterexample_run.line_for(probe, probe.run(implementations.reference())) is None
    line = counterexample_run.line_for(probe, probe.run(catalog.by_id(MISTAKE).impl()))
    assert line.startswith(probe.what) and "expected" in line


def test_the_report_reads_only_the_counterexample_record_of_the_named_mistake():
    hidden = _test("hidden", True, mistake=MISTAKE,
                   counterexample={"what": "sinusoidal_table(12, 10)", "line": "sinusoidal_table(12, 10) differs",
                                   "mistake": MISTAKE})
    assert counterexamples.for_test(hidden, {})["line"] == "sinusoidal_table(12, 10) differs"
    hidden.counterexample = {**hidden.counterexample, "mistake": "pe_sin_cos_swapped"}   # not its mistake
    assert counterexamples.for_test(hidden, {}) is None
    # and the record survives results.json
    hidden.counterexample["mistake"] = MISTAKE
    back = as_results(Results(score=0.0, tests=[hidden]).to_gradescope()).tests[0]
    assert back.counterexample == hidden.counterexample


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text))


@pytest.mark.slow
def test_a_hidden_only_mistake_is_shown_on_the_kit_probe_and_no_hidden_value_leaks(tmp_path):
    folder = tmp_path / "exponent"
    folder.mkdir()
    (folder / "positional_encoding.py").write_text(catalog.by_id(MISTAKE).source())
    probe = probes.for_mistake(MISTAKE)
    lines, visible = [], []
    for seed in (7, 8):   # two runs: different hidden inputs, the same public probe
        results = grading.grade_folder(folder, files=[SUITE], seed=seed, lang="en")
        graded = results.to_gradescope()
        public = next(t for t in graded["tests"] if t["visibility"] == "visible")
        hidden = next(t for t in graded["tests"] if t["visibility"] == "after_published")
        assert public["status"] == "passed" and hidden["status"] == "failed"
        assert hidden["extra_data"]["mistake"] == MISTAKE
        example = hidden["extra_data"]["counterexample"]
        assert example["what"] == probe.what and example["line"].startswith(probe.what)
        lines.append(example["line"])
        own = next(t for t in results.tests if t.hidden).withheld   # the instructor's: its drawn size, its values
        assert own["mistake"] == MISTAKE and "duration" in own and "duration" not in hidden["extra_data"]
        hidden_first = own["output"].splitlines()[0]
        hidden_call = re.match(r"sinusoidal_table\(\d+, \d+\)", hidden_first).group(0)
        # Gradescope shows a hidden test's output after publishing: fixed text and the probe's line
        assert f"The same mistake on a public input: {example['line']}" in hidden["output"]
        assert hidden_call not in json.dumps(graded) and hidden_first not in json.dumps(graded)
        for fmt in ("html", "md"):
            text = render.render_feedback(graded, fmt, student="s", lang="en")
            assert example["line"] in text and "public input the kit fixed" in text
            assert hidden_call not in text and hidden_first not in text
            assert not (_numbers(hidden_first) - _numbers(example["line"])) & _numbers(text)
        ko = render.render_feedback(graded, "html", student="s", lang="ko")
        assert example["line"] in ko and hidden_call not in ko
        visible.append(hidden)
    assert lines[0] == lines[1] and visible[0] == visible[1]


@pytest.mark.slow
def test_the_reference_gets_no_counterexample(tmp_path):
    folder = tmp_path / "ref"
    folder.mkdir()
    (folder / "positional_encoding.py").write_text((paths.solutions_dir() / "positional_encoding.py").read_text())
    graded = run_suites(folder, files=[SUITE], seed=7, lang="en")
    assert all(t["status"] == "passed" and "counterexample" not in t.get("extra_data", {}) for t in graded["tests"])


@pytest.mark.slow
def test_pictures_come_from_the_public_tests_child(tmp_path, monkeypatch):
    """A picture is drawn from the student's values: they are collected in the public tests' child,
    before the hidden tests' child starts, never in a child that has seen a hidden input (they were
    collected after the hidden tests, in their child)."""
    from autograder.run import plugin
    from autograder.sandbox.remote import RemoteImpl

    starts, seen, deadlines = [], [], []
    real_start, real_collect, real_begin = RemoteImpl.start, plugin.pictures.collect_from_session, RemoteImpl.begin_test

    def begin_test(self, exercise, served=()):
        if exercise is not None:
            deadlines.append(self.deadline)   # the submission's, as each graded test starts
        return real_begin(self, exercise, served)

    def start(self, *args, **kwargs):
        starts.append(self)
        return real_start(self, *args, **kwargs)

    def collect(remote, *args, **kwargs):
        seen.append(len(starts))
        return real_collect(remote, *args, **kwargs)

    monkeypatch.setattr(RemoteImpl, "start", start)
    monkeypatch.setattr(RemoteImpl, "begin_test", begin_test)
    monkeypatch.setattr(plugin.pictures, "collect_from_session", collect)
    folder = tmp_path / "ref"
    folder.mkdir()
    (folder / "positional_encoding.py").write_text((paths.solutions_dir() / "positional_encoding.py").read_text())
    graded = run_suites(folder, files=[SUITE], seed=7, lang="en", pictures=True)
    assert seen == [1]                     # once, while the first (public) child ran
    assert len(starts) == 2                # then the hidden tests' child
    # the pictures' own time limit does not stay on the hidden tests (the submission's is put back)
    assert len(deadlines) == 3 and len(set(deadlines)) == 1   # public, hidden, the public test's twin
    assert "pe_table" in graded["extra_data"]["figures"]
