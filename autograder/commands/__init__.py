"""The ``tkit`` sub-commands, one module each, each exposing a click command ``command``.

Rule: a command module imports only click and light modules at its top; torch,
pytest and the grading engine are imported inside the command's function, so that
``tkit --help`` (which imports every command module) stays fast.
"""


def prepare_run(lang, data_dir, names, param_hint: str) -> None:
    """What ``tkit check`` and ``tkit grade`` do before grading: use ``lang`` for the messages,
    point the MNIST loader (here and in any worker it spawns) at ``data_dir``, and check the
    exercise ``names`` (click.BadParameter naming ``param_hint`` and the valid names)."""
    import os

    import click

    from autograder import exercises, i18n

    i18n.set_language(lang)
    if data_dir is not None:  # read by autograder.mnist when the AutoEncoder's tests load MNIST
        os.environ["TKIT_DATA_DIR"] = str(data_dir.resolve())
    for name in names:
        try:
            exercises.get(name)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=param_hint) from None
