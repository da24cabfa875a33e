"""``tkit grade``: grade submissions (folders, .zip files, notebooks) or a whole class folder."""

from __future__ import annotations

from pathlib import Path

import click


def class_entries(class_dir: Path) -> list[tuple[str, Path]]:
    """``(student id, path)`` for every entry of a class folder: sub-folders, .zip files and
    .ipynb files; the id is the entry's name without its suffix. Hidden entries are skipped."""
    entries = []
    for entry in sorted(class_dir.iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir() or entry.suffix in (".zip", ".ipynb"):
            entries.append((entry.stem if entry.is_file() else entry.name, entry))
    return entries


@click.command(name="grade")
@click.argument("submissions", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--class-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Grade every entry of this folder; each entry's name is the student id.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Write OUT/<student>/results.json here.")
@click.option("--public-only", is_flag=True, help="Run the public tests only.")
@click.option("--exercise", "names", multiple=True, help="Grade only this exercise (repeatable).")
@click.option("--seed", type=int, default=None, help="Seed of the hidden tests (default: a fresh one per run).")
@click.option("--lang", type=click.Choice(["en", "ko"]), default=None, help="Language of the feedback.")
def command(submissions, class_dir, out_dir, public_only, names, seed, lang):
    """Grade SUBMISSIONS (folders, .zip or .ipynb) or every entry of --class-dir."""
    import secrets

    from autograder import batch, exercises, i18n

    i18n.set_language(lang)
    for name in names:
        try:
            exercises.get(name)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--exercise") from None
    todo = [(p.stem if p.is_file() else p.name, p) for p in submissions]
    if class_dir is not None:
        todo += class_entries(class_dir)
    if not todo:
        raise click.UsageError("give submissions to grade or --class-dir")
    ids = [sid for sid, _ in todo]
    if len(set(ids)) != len(ids):
        raise click.UsageError("two submissions have the same student id: " +
                               ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
    seed = seed if seed is not None else secrets.randbelow(2**31)
    visibility = ("public",) if public_only else ("public", "hidden")
    failures = []

    def on_result(sid, path, results):
        if isinstance(results, Exception):
            failures.append(sid)
            click.echo(f"{sid:<24} error: {results}")
            return
        ex = results["extra_data"]
        click.echo(f"{sid:<24} {results['score']:>6g} / {ex['max_score']:g}   "
                   f"({results['execution_time']:.1f} s)")

    options = dict(visibility=visibility, names=names or None, seed=seed, lang=lang)
    batch.grade_many(todo, out_dir, options=options, on_result=on_result)
    click.echo(f"graded {len(todo) - len(failures)} submission(s) into {out_dir} (seed {seed})")
