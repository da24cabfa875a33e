"""Benchmark of the training-based grading checks (issue 5): time, score and determinism.

Runs each training check exactly as grading does (the submission in a sandboxed child with
one torch thread, the measurement in this process, see :mod:`autograder.suitelib.training`)
on the reference solutions, ``--runs`` times (a new child each time), and optionally on the
catalog mutants the thresholds must reject. Prints one line per run: wall seconds of the
whole check (child start, training, measurement), the measured value, and the credit it earns;
and first, per check, the CPU seconds of the reference run in this process with one torch
thread, which is what the check costs on one idle core when the machine is shared.

    python benchmarks/bench_training.py --runs 3 --one-core   # the shipped MNIST test set
    python benchmarks/bench_training.py --only autoencoder --mutants

``--one-core`` pins this process and its children to a single CPU (Linux), the setting in
which each reference check must take at most 20 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder import catalog, paths  # noqa: E402
from autograder.remote import RemoteImpl, SubmissionError  # noqa: E402
from autograder.suitelib import training  # noqa: E402
from autograder.validate import write_mutant  # noqa: E402

MUTANTS = {
    "autoencoder": ("autoencoder_no_optimizer_step", "autoencoder_identity", "autoencoder_skip_path",
                    "autoencoder_wide_latent"),
    "transformer": ("transformer_no_causal_mask",),
}


def measure(check: str, folder: Path, data_dir, tf_budget=training.TF) -> tuple[float, str, float]:
    """Run one check on the submission in ``folder``: ``(seconds, value text, credit 0..1)``."""
    impl = RemoteImpl(folder)
    t0 = time.monotonic()
    try:
        if check == "autoencoder":
            run = training.autoencoder_run(impl, data_dir=data_dir)
            if run.problem:
                return time.monotonic() - t0, f"problem: {run.problem}", 0.0
            b = training.AE
            credit = training.linear_credit(run.mse, b.learns_mse, b.full_credit_mse) if run.mse <= b.learns_mse \
                else 0.0
            return time.monotonic() - t0, f"held-out MSE {run.mse:.5f} losses {run.losses}", credit
        run = training.transformer_run(impl, tf_budget)
        b = tf_budget
        credit = training.linear_credit(run.accuracy, b.partial_acc, b.full_credit_acc)
        trend = f"loss {run.losses[0]:.3f} -> {run.losses[-1]:.4f}" if run.losses else "untrained"
        return time.monotonic() - t0, f"exact match {run.accuracy:.3f} {trend}", credit
    except SubmissionError as exc:
        return time.monotonic() - t0, f"failed: {exc.message.splitlines()[0]}", 0.0
    finally:
        impl.close()


def cpu_seconds_in_process(check: str, data_dir) -> float:
    """CPU seconds of one reference check run in this process with one torch thread (the child's
    setting): a contention-free estimate of the wall time on one idle core."""
    import torch

    from autograder import mnist, variants

    torch.set_num_threads(1)
    mnist.grading_split(training.AE.n_train, training.AE.n_heldout, training.AE.seed, data_dir)  # warm caches
    ref = variants.reference()
    t0 = time.process_time()
    if check == "autoencoder":
        training.autoencoder_run(ref, data_dir=data_dir, cache=False)
    else:
        training.transformer_run(ref, cache=False)
    return time.process_time() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("autoencoder", "transformer"), default=None)
    parser.add_argument("--runs", type=int, default=1, help="runs of the reference per check")
    parser.add_argument("--mutants", action="store_true", help="also run the mutants the thresholds must reject")
    parser.add_argument("--data-dir", default=None, help="folder holding the MNIST IDX files")
    parser.add_argument("--one-core", action="store_true", help="pin to one CPU (Linux)")
    args = parser.parse_args(argv)
    if args.one_core:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    checks = [args.only] if args.only else ["autoencoder", "transformer"]
    print(f"cpus usable: {len(os.sched_getaffinity(0))}; AE budget {training.AE}; TF budget {training.TF}")
    for check in checks:
        cpu = cpu_seconds_in_process(check, args.data_dir)
        print(f"{check:12s} reference in this process: {cpu:6.1f} CPU s (one torch thread)", flush=True)
        for i in range(args.runs):
            secs, value, credit = measure(check, paths.solutions_dir(), args.data_dir)
            print(f"{check:12s} reference run {i + 1}: {secs:6.1f} s  credit {credit:.2f}  {value}", flush=True)
        if args.mutants and check == "transformer":
            secs, value, credit = measure(check, paths.solutions_dir(), args.data_dir,
                                          dataclasses.replace(training.TF, steps=0))
            print(f"{check:12s} untrained reference: {secs:6.1f} s  credit {credit:.2f}  {value}", flush=True)
        if args.mutants:
            for mutant_id in MUTANTS[check]:
                with tempfile.TemporaryDirectory(prefix="tkit-bench-") as tmp:
                    write_mutant(catalog.by_id(mutant_id), Path(tmp))
                    secs, value, credit = measure(check, Path(tmp), args.data_dir)
                print(f"{check:12s} {mutant_id}: {secs:6.1f} s  credit {credit:.2f}  {value}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
