"""GradingOptions (one validated, picklable value from the commands to the plugin) and the shared
click options (no grading run here: all cheap)."""

import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder import cli, context
from autograder.options import GradingOptions, OptionsError


@pytest.mark.parametrize("fields, field, text", [
    ({"seed": -1}, "seed", "the seed must be a whole number from 0 to 2**63 - 1, got -1"),
    ({"seed": 2**63}, "seed", "from 0 to 2**63 - 1"),
    ({"seed": "3"}, "seed", "got '3'"),
    ({"names": ["attenion"]}, "names", "unknown exercise 'attenion'; choose from: embedding,"),
    ({"lang": "fr"}, "lang", "lang must be one of en, ko, got 'fr'"),
    ({"visibility": ()}, "visibility", "visibility must be some of public, hidden"),
    ({"visibility": ("secret",)}, "visibility", "got ('secret',)"),
    ({"time_limit": 0}, "time_limit", "time limit must be a positive number, got 0"),
    ({"memory_limit": -5}, "memory_limit", "memory limit must be a positive number"),
])
def test_a_bad_option_is_refused_in_one_place_naming_the_field(fields, field, text):
    with pytest.raises(OptionsError) as caught:
        GradingOptions(**fields)
    assert caught.value.field == field and text in str(caught.value)
    with pytest.raises(OptionsError):   # the same check on a copy
        GradingOptions().replace(**fields)


def test_options_are_normalised_frozen_and_picklable():
    options = GradingOptions(names=["masks", "attention"], visibility=["public"], seed=7, lang="ko",
                             error_log="log.txt")
    assert options.names == ("masks", "attention") and options.visibility == ("public",)
    assert options.error_log == Path("log.txt") and GradingOptions(names=[]).names is None
    assert pickle.loads(pickle.dumps(options)) == options   # what a worker of the pool receives
    with pytest.raises(AttributeError):
        options.seed = 8
    assert GradingOptions.of(options) is options and GradingOptions.of(options, seed=9).seed == 9
    assert GradingOptions.of({"seed": 3}, lang="en") == GradingOptions(seed=3, lang="en")
    with pytest.raises(TypeError):
        GradingOptions.of({"sed": 3})
    assert options.results_key() == {"visibility": ["public"], "names": ["masks", "attention"], "training": True}


@pytest.mark.parametrize("argv, hint, text", [
    (["grade", "--seed", "-1", "--out", "OUT", "."], "'--seed'", "from 0 to 2**63 - 1"),
    (["grade", "--exercise", "attenion", "--out", "OUT", "."], "'--exercise'", "unknown exercise 'attenion'"),
    (["check", "attenion"], "EXERCISE", "unknown exercise 'attenion'"),
    (["validate", "--exercise", "nope"], "'--exercise'", "unknown exercise 'nope'"),
    (["similarity", "--exercise", "nope", "--out", "OUT", "."], "'--exercise'", "unknown exercise 'nope'"),
    (["nbgrader", "grade", "--course-dir", ".", "--seed", "-3"], "'--seed'", "got -3"),
])
def test_shared_options_refuse_bad_values_alike_in_every_command(argv, hint, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, argv)
    assert result.exit_code == 2, result.output
    assert hint in result.output and text in result.output


def test_lang_is_honoured_for_the_whole_command(monkeypatch):
    monkeypatch.setenv("TKIT_LANG", "en")
    korean = CliRunner().invoke(cli.main, ["list", "--lang", "ko"])
    english = CliRunner().invoke(cli.main, ["list"])
    assert korean.exit_code == english.exit_code == 0
    assert "토큰 임베딩" in korean.output and "Token embedding" not in korean.output
    assert "Token embedding" in english.output and "토큰 임베딩" not in english.output
    assert context.current(required=False) is None
    from autograder import i18n

    assert i18n.language() == "en"   # the command's language ended with it


@pytest.mark.parametrize("command", ["grade", "similarity"])
def test_an_empty_class_dir_is_named_not_reported_as_missing(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.md").write_text("no submissions yet")
    result = CliRunner().invoke(cli.main, [command, "--class-dir", "empty", "--out", "OUT"])
    assert result.exit_code == 2, result.output
    assert "--class-dir empty holds no submissions" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "OUT").exists()


@pytest.mark.parametrize("lang, text", [
    ("en", "is not a folder, a .zip or a .ipynb file"),
    ("ko", "폴더, .zip 또는 .ipynb 파일이 아닙니다"),
])
def test_a_submission_of_the_wrong_kind_is_named_in_the_chosen_language(lang, text, tmp_path):
    notes = tmp_path / "results.json"
    notes.write_text('{"score": 1}')
    result = CliRunner().invoke(cli.main, ["check", "--path", str(notes), "--lang", lang])
    assert result.exit_code == 1, result.output
    assert text in result.output and "results.json" in result.output
    assert "Traceback" not in result.output
