"""Benchmark of the training-based grading: cost, fairness and power.

Three parts, each selected by an option (all by default):

``--cost``: what the two training checks add to grading the reference, as a ratio to a bare
``python -c "import torch"`` measured side by side in the same run (alternating, ``--runs``
times, medians): the wall time of ``grade_folder(solutions, names=[autoencoder, transformer])``
with the training tests minus the same without them, on one worker. One untimed grading first
starts the sandbox's zygote (``import torch`` and what it pre-imports for the children, once per
grading process or class batch), so no figure carries that start.

``--table``: the fairness table of :mod:`autograder.checks.training`: six correct
AutoEncoders (``tests/data/autoencoders/``) trained with the grading budget, each over
``--seeds`` run seeds and every member of the secret transform family (seed ``s`` takes the
members ``t`` with ``t % seeds == s % seeds``, so every member and every seed is covered; ``--full``
takes every pair), in this process with one torch thread; per architecture the min / median /
max held-out MSE and how many runs earn full credit.

``--mutants``: the catalog's training mutants and the reference under the same draws (the
credit each earns; the loop mistakes, named by the loop test), with the Transformer's reference
accuracy and an untrained reference.

``--parts``: what recording the model in the student's child, starting the trusted child and
training there cost, for the reference (wall seconds, real children).

``--interpreter``: the kit's graph interpreter (:func:`autograder.child.graphs.run`: a loop over
the validated steps, fresh copies of the state per call) against the torch.fx replay it replaced
(generated Python calling the same operators on the state as it is, rebuilt here from the same
validated plan, for this comparison only), both training the reference's recorded AutoEncoder
and Transformer with the grading budgets in this process, alternating ``--runs`` times (medians).

    python benchmarks/bench_training.py --cost --runs 3
    python benchmarks/bench_training.py --table --seeds 5
    python benchmarks/bench_training.py --interpreter --runs 3
"""

from __future__ import annotations

import argparse
import operator
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from autograder import paths  # noqa: E402
from autograder.checks import draws, training, training_loop  # noqa: E402
from autograder.checks import transformer_training as tt  # noqa: E402
from autograder.mistakes import catalog, implementations  # noqa: E402
from autograder.run import grading  # noqa: E402

ARCHITECTURES = REPO / "tests" / "data" / "autoencoders"
AE_MUTANTS = ("autoencoder_no_optimizer_step", "autoencoder_identity", "autoencoder_skip_path")  # same graph as the reference
TF_MUTANTS = ("transformer_no_causal_mask",)


def import_torch_wall() -> float:
    """Wall seconds of ``python -c "import torch"`` in a new interpreter."""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.monotonic() - t0


def grading_wall(training_tests: bool, seed: int) -> float:
    """Wall seconds of grading the reference's autoencoder and transformer exercises (one worker)."""
    t0 = time.monotonic()
    results = grading.grade_folder(paths.solutions_dir(), names=["autoencoder", "transformer"], seed=seed,
                                   training=training_tests)
    wall = time.monotonic() - t0
    got, full = results.score, sum(t.max_score for t in results.tests)
    if training_tests and got != full:
        print(f"  warning: the reference scored {got}/{full}", flush=True)
    return wall


def cost(runs: int, seed: int) -> None:
    """Print the training checks' added wall time as a ratio to ``import torch`` (medians)."""
    torch_s, with_s, without_s = [], [], []
    grading_wall(False, seed)  # untimed: starts the zygote, once per grading process or class batch
    for _ in range(runs):
        torch_s.append(import_torch_wall())
        without_s.append(grading_wall(False, seed))
        with_s.append(grading_wall(True, seed))
    t, w, wo = (statistics.median(v) for v in (torch_s, with_s, without_s))
    print(f"cost: import torch {t:.2f} s; reference autoencoder+transformer grading {wo:.1f} s without the "
          f"training tests, {w:.1f} s with them; the training checks add {w - wo:.1f} s = "
          f"{(w - wo) / t:.1f}x import torch (medians of {runs}, side by side)", flush=True)


def parts(seed: int) -> None:
    """Print what each part of the two training checks costs for the reference, in real children:
    recording in the student's child, training and decoding in the trusted child (wall seconds)."""
    from autograder.sandbox import Limits
    from autograder.sandbox.remote import RemoteImpl

    impl = RemoteImpl(paths.solutions_dir(), Limits(call_timeout=600, preload_training=True))
    budget, tb = training.AE, tt.TF
    try:
        impl.autoencoder  # start the child outside the figures
        split = training.draw_digits(budget, None, seed)
        t0 = time.monotonic()
        captured = impl.task("capture_autoencoder", impl.autoencoder, budget.latent_dim,
                             *training.capture_inputs(budget, seed), budget.seed)
        t1 = time.monotonic()
        with training.trusted_process(impl) as kit:
            kit.task("ping")
            t2 = time.monotonic()
            kit.task("train_autoencoder_graph", captured, split.train_images, split.heldout_images, budget.latent_dim,
                     budget.epochs, budget.lr, budget.batch_size, 1, budget.max_constants, budget.z_noise)
            t3 = time.monotonic()
        print(f"parts: autoencoder record {t1 - t0:.2f} s, trusted child start {t2 - t1:.2f} s, "
              f"train + measure {t3 - t2:.2f} s", flush=True)
        src, tgt, held_src, _ = tt.draw_task(tb, seed)
        t0 = time.monotonic()
        captured = impl.task("capture_transformer", impl.transformer, tb.config(), *tt.capture_inputs(tb, seed), tb.seed)
        t1 = time.monotonic()
        with training.trusted_process(impl) as kit:
            kit.task("ping")
            t2 = time.monotonic()
            kit.task("train_transformer_graph", captured, src, tgt, held_src, tb.vocab, tb.steps, tb.batch_size,
                     tb.lr, tb.warmup, 1, tt.PAD, tt.BOS, tt.EOS, tb.max_constants)
            t3 = time.monotonic()
        print(f"parts: transformer record {t1 - t0:.2f} s, trusted child start {t2 - t1:.2f} s, "
              f"train + decode {t3 - t2:.2f} s", flush=True)
    finally:
        impl.close()


def fx_run(plan, values: dict, inputs: list, commit=None):
    """The replay the interpreter replaced: ``plan``'s steps as a ``torch.fx`` module (built once
    per plan), called on ``values`` as they are (no copies; statistics written in place)."""
    import torch.fx

    from autograder.child.graph_schema import Ref

    cache = fx_run.__dict__.setdefault("modules", {})
    if id(plan) not in cache:
        graph, nodes, leaves = torch.fx.Graph(), {}, []

        def node_of(name):
            if name not in nodes:
                leaves.append(name)
                nodes[name] = graph.placeholder(f"a{len(leaves)}")
            return nodes[name]

        def convert(value):
            if isinstance(value, Ref):
                return node_of(value.name)
            return [convert(v) for v in value] if isinstance(value, list) else value

        def bind(names, out):
            if isinstance(names, str):
                nodes[names] = out
            elif isinstance(names, list):
                for i, name in enumerate(names):
                    if name is not None:
                        bind(name, graph.call_function(operator.getitem, (out, i)))

        for name in plan.inputs:
            node_of(name)
        for step in plan.steps:
            args, kwargs = tuple(convert(v) for v in step.args), {k: convert(v) for k, v in step.kwargs.items()}
            out = graph.call_function(_no_grad_call, (step.call, args, kwargs)) if step.no_grad else \
                graph.call_function(step.call, args, kwargs)
            if step.zero:
                out = graph.call_function(_zeroed, (out,))
            bind(step.out, out)
        graph.output(nodes[plan.output])
        cache[id(plan)] = (torch.fx.GraphModule(torch.nn.Module(), graph), leaves, plan)
    module, leaves, _ = cache[id(plan)]
    local = {**values, **plan.constants, **dict(zip(plan.inputs, inputs))}
    return module(*[local[name] for name in leaves])


def _no_grad_call(op, args, kwargs):
    with torch.no_grad():
        return op(*args, **kwargs)


def _zeroed(tensor):
    with torch.no_grad():
        return tensor.zero_()


def interpreter(runs: int, seed: int) -> None:
    """Print the wall seconds of the kit's training of the reference's recorded graphs with the
    interpreter and with the fx replay, alternating (medians of ``runs``)."""
    from autograder.child import graph_training, graphs, tasks

    ref = implementations.reference()
    budget, tb = training.AE, tt.TF
    split = training.draw_digits(budget, None, seed)
    ae = tasks.run("capture_autoencoder", ref.autoencoder, budget.latent_dim, *training.capture_inputs(budget, seed),
                   budget.seed)
    tf = tasks.run("capture_transformer", ref.transformer, tb.config(), *tt.capture_inputs(tb, seed), tb.seed)
    src, tgt, held_src, _ = tt.draw_task(tb, seed)
    jobs = {"autoencoder": lambda: graph_training.train_autoencoder(
                ae, split.train_images, split.heldout_images, budget.latent_dim, budget.epochs, budget.lr,
                budget.batch_size, 1, budget.max_constants, budget.z_noise)["after"],
            "transformer": lambda: graph_training.train_transformer(
                tf, src, tgt, held_src, tb.vocab, tb.steps, tb.batch_size, tb.lr, tb.warmup, 1, tt.PAD, tt.BOS,
                tt.EOS, tb.max_constants)["generated"]}
    kit_run = graphs.run
    for name, job in jobs.items():
        times: dict[str, list] = {"interpreter": [], "fx": []}
        results = {}
        for k in range(runs):
            order = (("interpreter", kit_run), ("fx", fx_run))
            for label, runner in order if k % 2 == 0 else order[::-1]:  # each goes first in turn
                graphs.run = runner
                try:
                    t0 = time.monotonic()
                    results[label] = job()
                    times[label].append(time.monotonic() - t0)
                finally:
                    graphs.run = kit_run
        same = torch.equal(results["interpreter"], results["fx"])
        i, f = statistics.median(times["interpreter"]), statistics.median(times["fx"])
        print(f"interpreter: {name} training + measure {i:.2f} s with the interpreter, {f:.2f} s with the fx "
              f"replay: ratio {i / f:.3f} (medians of {runs}, alternating; same outputs: {same})", flush=True)


def load(folder: Path):
    """The submission in ``folder`` as a trusted in-process implementation."""
    sources = {p.stem: p.read_text(encoding="utf-8") for p in folder.glob("*.py")}
    return implementations.load_modules(sources, folder, folder.name)


def pairs(seeds: int, full: bool) -> list[tuple[int, int]]:
    """``(run seed, transform)`` pairs covering every member of the drawn family and every seed."""
    members = range(1, draws.N_TRANSFORMS)
    return [(s, t) for s in range(seeds) for t in members if full or t % seeds == s % seeds]


def table(seeds: int, full: bool, only: list[str] | None = None) -> None:
    """Print the per-architecture fairness table (see the module docstring); ``only``: names of
    the architectures' folders to run (default: all six)."""
    budget = training.AE
    print(f"fairness table: AE budget {budget}", flush=True)
    print(f"{'architecture':28s} {'runs':>4s} {'min':>7s} {'median':>7s} {'max':>7s} {'full credit':>11s}"
          f"  worst (seed, transform)", flush=True)
    for folder in sorted(p for p in ARCHITECTURES.iterdir() if p.is_dir()):
        if only and folder.name not in only:
            continue
        impl = load(folder)
        results = []
        for seed, t in pairs(seeds, full):
            run = training.autoencoder_run(impl, cache=False, seed=seed, transform=t)
            ok = training.autoencoder_failure(run, budget.full_credit_mse) is None
            results.append((run.mse, ok, seed, draws.describe_transform(t)))
        mses = [r[0] for r in results]
        worst = max(results, key=lambda r: r[0])
        print(f"{folder.name:28s} {len(results):4d} {min(mses):7.4f} {statistics.median(mses):7.4f} "
              f"{max(mses):7.4f} {sum(r[1] for r in results):5d}/{len(results):<5d}  ({worst[2]}, {worst[3]})",
              flush=True)


def mutants(seed: int) -> None:
    """Print the credit the reference and the training mutants earn under one run's draws."""
    budget, tb = training.AE, tt.TF
    initial, batches = training_loop.loop_probe(seed)
    for mutant_id in sorted(training_loop.LOOP_MISTAKES):
        impl = catalog.by_id(mutant_id).impl()
        out = impl.task("run_train_autoencoder", impl.autoencoder, initial, batches, training_loop.LOOP.epochs,
                        training_loop.LOOP.lr)
        _, named = training_loop.loop_verdict(out["state"], out["losses"], initial, batches)
        print(f"train_autoencoder {mutant_id:32s} named {named.id if named else None}", flush=True)
    for label, impl in [("reference", implementations.reference())] + [(m, catalog.by_id(m).impl()) for m in AE_MUTANTS]:
        run = training.autoencoder_run(impl, cache=False, seed=seed)
        failure = training.autoencoder_failure(run, budget.learns_mse)
        credit = 0.0 if failure else training.linear_credit(run.mse, budget.learns_mse, budget.full_credit_mse)
        print(f"autoencoder {label:32s} mse {run.mse:.4f} (before {run.mse_before:.4f})  credit {credit:.2f}",
              flush=True)
    cases = [("reference", implementations.reference(), tb), ("untrained reference", implementations.reference(),
                                                        tt.TransformerBudget(steps=0))]
    cases += [(m, catalog.by_id(m).impl(), tb) for m in TF_MUTANTS]
    for label, impl, b in cases:
        run = tt.transformer_run(impl, b, cache=False, seed=seed)
        credit = tt.linear_credit(run.accuracy, b.partial_acc, b.full_credit_acc)
        print(f"transformer {label:32s} exact match {run.accuracy:.3f}  loss {run.loss:.3f} (untrained "
              f"{run.loss_before:.3f})  credit {credit:.2f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cost", action="store_true", help="the added wall time as a ratio to import torch")
    parser.add_argument("--table", action="store_true", help="the six architectures' fairness table")
    parser.add_argument("--mutants", action="store_true", help="the credit of the reference and the mutants")
    parser.add_argument("--parts", action="store_true", help="what recording, the trusted child and training cost")
    parser.add_argument("--interpreter", action="store_true", help="the graph interpreter against the fx replay")
    parser.add_argument("--runs", type=int, default=3, help="side-by-side repetitions of --cost")
    parser.add_argument("--seeds", type=int, default=5, help="run seeds of --table")
    parser.add_argument("--full", action="store_true", help="--table: every seed with every transform")
    parser.add_argument("--architecture", action="append", default=None,
                        help="--table: only this folder of tests/data/autoencoders (repeatable)")
    parser.add_argument("--seed", type=int, default=1, help="the run seed of --cost and --mutants")
    args = parser.parse_args(argv)
    everything = not (args.cost or args.table or args.mutants or args.parts or args.interpreter)
    torch.set_num_threads(1)  # as in the grading child
    if args.cost or everything:
        cost(args.runs, args.seed)
    if args.parts or everything:
        parts(args.seed)
    if args.mutants or everything:
        mutants(args.seed)
    if args.interpreter or everything:
        interpreter(args.runs, args.seed)
    if args.table or everything:
        table(args.seeds, args.full, args.architecture)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
