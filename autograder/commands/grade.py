"""``tkit grade``: grade submissions (folders, .zip files, notebooks) or a whole class folder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from autograder.commands import submission_list
from autograder.commands.options import (class_dir_option, data_dir_option, exercise_option, grading_options,
                                         lang_option, seed_option, time_limit_option, use_data_dir,
                                         workers_option)
from autograder.i18n import _
from autograder.intake.untrusted import shown


def require_training_data(names) -> None:
    """Refuse to grade (click.ClickException) when the AutoEncoder is graded (``names`` empty or
    naming it) and no MNIST is found: its training tests would be the grader's failure, not the
    students'. The message names the folders searched and the commands that fix it."""
    if names and "autoencoder" not in names:
        return
    from autograder import mnist

    if "test" in mnist.available_splits():
        return
    searched = ", ".join(str(d) for d in mnist.search_dirs())
    raise click.ClickException(_(
        "MNIST is missing (searched: {searched}), so the AutoEncoder's training tests cannot be graded. "
        "Run `{download}` (or `tkit data mnist --data-dir DIR` to check a copy), then grade "
        "with --data-dir DIR or TKIT_DATA_DIR=DIR; or leave the AutoEncoder out with --exercise.").format(
            searched=searched, download=mnist.DOWNLOAD_HINT))


@click.command(name="grade")
@click.argument("submissions", nargs=-1, type=click.Path(exists=True, path_type=Path))
@class_dir_option()
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Write OUT/submissions/<student>/results.json here (the student id percent-encoded).")
@click.option("--public-only", is_flag=True, help="Run the public tests only.")
@exercise_option("Grade")
@seed_option()
@lang_option(help="Language of the feedback.")
@click.option("--gradebook", "gradebook_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SQLite gradebook to record into [default: OUT/gradebook.sqlite].")
@click.option("--resume", is_flag=True,
              help="Grade only what the gradebook does not hold as it would be graded now: new or changed "
                   "submissions, those graded by another version of the grader (its suites, solutions, catalog "
                   "or code) or with other options, and those whose files a killed run left incomplete (reuses "
                   "the gradebook's seed unless --seed is given).")
@click.option("--pictures/--no-pictures", default=True, show_default=True,
              help="Draw the feedback pictures from the student's functions, run at the end of the grading "
                   "(no points).")
@time_limit_option()
@workers_option()
@click.option("--shard", "shard_spec", default=None, metavar="K/N",
              help="Grade only shard K of N (0-based, every N-th student id in sorted order), for a Slurm "
                   "array or a Kubernetes indexed Job; join the shards with `tkit gradebook merge`.")
@data_dir_option()
@click.option("--similarity", "with_similarity", is_flag=True,
              help="Also write OUT/similarity.csv, OUT/similarity-structure.csv, OUT/similarity-behaviour.csv and "
                   "OUT/similarity.html: the code, the structure and the rare wrong outputs the submissions share "
                   "(see `tkit similarity`; not with --shard).")
def command(submissions, class_dir, out_dir, public_only, names, seed, lang, gradebook_path, resume, pictures,
            time_limit, workers, shard_spec, data_dir, with_similarity):
    """Grade SUBMISSIONS (folders, .zip or .ipynb) or every entry of --class-dir.

    Writes OUT/submissions/<student>/results.json, feedback.html and feedback.md (the
    folder is the student id percent-encoded: a-z 0-9 . _ - kept), and for the class
    OUT/grades.csv, OUT/summary.html, the gradebook and, when a regrade moved a score,
    OUT/regrades.csv. Exits 1 when a submission could not be graded (it is "not graded" in
    grades.csv, never 0), 130 when interrupted (--resume goes on).
    """
    if workers == 1:
        from autograder.sandbox import zygote_parent

        zygote_parent.prestart()  # grading happens in this process: overlap the sandbox's torch import
    from autograder.run import batch

    options = grading_options(visibility=("public",) if public_only else ("public", "hidden"), names=names,
                              seed=seed, lang=lang, pictures=pictures,
                              **({} if time_limit is None else {"time_limit": time_limit}))
    use_data_dir(data_dir)
    require_training_data(names)
    todo = submission_list(submissions, class_dir)
    if shard_spec is not None and with_similarity:
        raise click.UsageError("--similarity compares the whole class: run `tkit similarity` once, not per shard")
    if shard_spec is not None:
        if seed is None:
            raise click.UsageError("--shard needs --seed: every shard of a class must draw the same hidden inputs")
        try:
            todo = batch.shard(todo, *batch.parse_shard(shard_spec))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--shard") from None
        click.echo(_("shard {shard}: {n} submission(s)").format(shard=shard_spec, n=len(todo)))
    from autograder import sandbox

    warning = sandbox.protection_warning()
    if warning:
        click.secho(warning, fg="yellow", err=True)
    from autograder.records.class_run import ClassRecords

    records = ClassRecords(out_dir, options=options.results_key(), gradebook_path=gradebook_path, lang=lang)
    seed = records.seed(seed, resume)
    options = options.replace(seed=seed)
    all_todo, todo = todo, records.plan(todo, resume)
    if resume:
        click.echo(_("resume: {n} unchanged submission(s) kept from the gradebook").format(n=len(all_todo) - len(todo)))
        for reason, count in sorted(Counter(records.reasons[sid] for sid, _path in todo).items()):
            click.echo(_("resume: {n} to grade ({reason})").format(n=count, reason=reason))
    failures = []

    def on_result(sid, path, results):
        recorded = records.on_result(sid, path, results)
        if isinstance(results, Exception):
            failures.append(sid)
            click.echo(f"{shown(sid):<24} " + _("not graded: {message}").format(message=shown(results)))
            return
        click.echo(f"{shown(sid):<24} {recorded.score:>6g} / {recorded.max_score or 0:g}   "
                   f"({recorded.total_time or 0:.1f} s)")

    interrupted = None
    try:
        try:
            batch.grade_many(todo, out_dir, options=options, on_result=on_result, workers=workers, progress=True)
        except batch.Interrupted as exc:
            interrupted = exc
        csv_path, summary_path = records.finish()
        report = records.regrade_report()
    except KeyboardInterrupt:   # a second Ctrl-C, while the class files were written: each is whole or old
        interrupted = interrupted or KeyboardInterrupt(_("interrupted"))
    finally:
        records.close()
    if interrupted is not None:
        click.secho(_("{reason}; every finished result is kept (rerun with --resume to grade the rest)").format(reason=interrupted),
                    fg="yellow", err=True)
        raise SystemExit(130)
    click.echo(_("graded {n} submission(s) into {out} (seed {seed})").format(n=len(todo) - len(failures), out=out_dir, seed=seed))
    click.echo(_("wrote {csv}, {summary} and {gradebook}").format(csv=csv_path, summary=summary_path, gradebook=records.book.path))
    if report:
        click.echo(_("regrade: {n} student(s)' score changed (see {file} and the summary)").format(
            n=len(report), file=Path(out_dir) / "regrades.csv"))
    if with_similarity:
        from autograder.commands.similarity import run_report

        run_report(all_todo, out_dir, names=names or None, workers=workers, gradebook=records.book.path)
    ungraded = sorted(sid for sid, _path in all_todo   # this run's, kept ones, and any whose recording failed
                      if records.class_results.get(sid) is None or records.class_results[sid].error)
    if ungraded:
        raise click.ClickException(_("{n} of {total} submission(s) could not be graded: {ids} (not graded in "
                                     "grades.csv, the reason in its not_graded_reason column)").format(
            n=len(ungraded), total=len(all_todo), ids=", ".join(shown(sid) for sid in ungraded)))
