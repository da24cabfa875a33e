"""The ``tkit`` console script (``autograder.cli:entry``) leaves without torch's teardown, and
loses nothing doing so: its exit code, what it printed and the files it wrote are all there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def tkit(*args, cwd=REPO_ROOT):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_passing_and_a_failing_check_keep_their_exit_code_output_and_files(tmp_path):
    passed = tkit("check", "masks", "--path", str(REPO_ROOT / "solutions"), "--json", str(tmp_path / "ok.json"),
                  "--lang", "en")
    assert passed.returncode == 0, passed.stderr[-2000:]
    assert "Results" in passed.stdout and "masks" in passed.stdout
    ok = json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))
    assert ok["score"] == ok["extra_data"]["max_score"] > 0
    failed = tkit("check", "masks", "--path", str(REPO_ROOT / "exercises"), "--json", str(tmp_path / "stub.json"),
                  "--lang", "en")
    assert failed.returncode == 1, failed.stderr[-2000:]
    stub = json.loads((tmp_path / "stub.json").read_text(encoding="utf-8"))
    assert stub["score"] == 0 and len(stub["tests"]) == len(ok["tests"])


def test_usage_errors_and_commands_without_torch_exit_the_usual_way(tmp_path):
    bad = tkit("check", "--seed", "-1")
    assert bad.returncode == 2 and "seed" in bad.stderr
    version = tkit("--version")
    assert version.returncode == 0 and "tkit" in version.stdout


def test_entry_leaves_through_os_exit_with_the_commands_code_once_torch_is_loaded(monkeypatch, capsys):
    import torch  # noqa: F401  (loaded, as after any grading command)

    from autograder import cli

    class Left(Exception):
        pass

    def fake_exit(code):
        raise Left(code)

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    monkeypatch.setattr(cli, "_hold_interrupts", lambda: None)   # not in pytest's own process
    for argv, code in ((["tkit", "list"], 0), (["tkit", "check", "--seed", "-1"], 2)):
        monkeypatch.setattr(sys, "argv", argv)
        try:
            cli.entry()
        except Left as left:
            assert left.args == (code,), argv
        else:
            raise AssertionError(f"{argv}: entry() returned instead of leaving through os._exit")
    assert "positional_encoding" in capsys.readouterr().out


def test_a_ctrl_c_after_the_command_is_held_back_during_the_exit():
    """CPython can abort (exit -6, "Fatal Python error ... finalizing") when SIGINT arrives during
    the interpreter's teardown; once the command is over entry() blocks SIGINT, on both exits."""
    probe = ("import signal, sys\n"
             "from autograder import cli\n"
             "def report(*args):\n"
             "    print('sigint blocked:', signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), flush=True)\n"
             "    return real(*args)\n"
             "real, sys.exit = sys.exit, report\n"
             "sys.argv = ['tkit', *sys.argv[1:]]\n"
             "cli.entry()\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for args, code in ((["--version"], 0), (["check", "--seed", "-1"], 2)):
        run = subprocess.run([sys.executable, "-c", probe, *args], cwd=REPO_ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == code, run.stderr[-2000:]
        assert run.stdout.strip().splitlines()[-1] == "sigint blocked: True", run.stdout
