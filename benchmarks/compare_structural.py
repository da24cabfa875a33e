"""Copydetect's token winnowing against the structural matcher
(``autograder/similarity/structural.py``) on the evaluation set of ``tests/data/similarity/``.

Per exercise (positional_encoding, attention, multi_head_attention): one student's correct
module ``copied``, the issue's three rewrites of it (``copy_api``, ``copy_three_address``,
``copy_inlined``) and independent correct solutions (``ind_*``: written in other students'
styles; ``ind_reference``: the kit's reference; ``sc_alice``: the sample class's modules
written apart from the reference: alice's attention). For ``autoencoder`` the independent set is the six architectures of
``tests/data/autoencoders``, the reference and the sample class. Every pair goes through
``matcher.compare_class`` (one class per exercise, stubs as boilerplate, no reference row), so
the figures are those ``tkit similarity`` reports. Prints, per exercise, each matcher on each
rewrite and the highest pair among the independent solutions (a copy and an independent
solution counts as independent too), and which pairs each matcher flags. Run::

    python benchmarks/compare_structural.py            # the table
    python benchmarks/compare_structural.py --check    # first check every module of the set is
                                                       # correct (the reference's outputs on random inputs)
    python benchmarks/compare_structural.py --min-size 5   # features of at least 5 nodes (default 4)
    python benchmarks/compare_structural.py --dolos DIR    # Dolos too: DIR holds node_modules with
        # @dodona/dolos-lib (``npm install @dodona/dolos-lib`` in DIR; node >= 20), the stub as its
        # boilerplate file

The last lines rank the matchers without thresholds: per exercise, how many rewrites each scores
above every independent pair of that exercise (the rewrites it catches at zero false flags).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "data" / "similarity"))

import evasion  # noqa: E402
from autograder.similarity import matcher, structural  # noqa: E402

SAMPLE = REPO / "examples" / "sample_class"
# the sample class's modules written apart from the reference (its README: alice's own style for the PE
# table and attention); its other modules are the reference with a mistake edited in, copies by design
SAMPLE_MODULES = {"attention": ("alice",)}  # (alice's PE table is ind_loops of the PE set)


def evaluation_classes() -> dict[str, dict[str, str]]:
    """exercise -> {name: code}: the evasion set, the reference and the sample class's modules."""
    classes = evasion.modules()
    classes["autoencoder"] = {f"ind_{p.parent.name}": p.read_text(encoding="utf-8")
                              for p in sorted((REPO / "tests" / "data" / "autoencoders").glob("*/autoencoder.py"))}
    for exercise, mods in classes.items():
        mods["ind_reference"] = (REPO / "solutions" / f"{exercise}.py").read_text(encoding="utf-8")
        for sid in SAMPLE_MODULES.get(exercise, ()):
            mods[f"sc_{sid}"] = (SAMPLE / sid / f"{exercise}.py").read_text(encoding="utf-8")
    return classes


def compare(exercise: str, mods: dict[str, str]) -> dict[tuple[str, str], tuple]:
    """(a, b) sorted -> (copydetect Pair or None, StructurePair or None) for one exercise's class."""
    with tempfile.TemporaryDirectory() as tmp:
        entries = []
        for sid, code in mods.items():
            (Path(tmp) / sid).mkdir()
            (Path(tmp) / sid / f"{exercise}.py").write_text(code, encoding="utf-8")
            entries.append((sid, Path(tmp) / sid))
        result = matcher.compare_class(entries, reference=False, names=[exercise], time_limit=None)
    out: dict = {}
    for p in result.pairs:
        out.setdefault(tuple(sorted((p.student_a, p.student_b))), [None, None])[0] = p
    for p in result.structure:
        out.setdefault(tuple(sorted((p.student_a, p.student_b))), [None, None])[1] = p
    return out


DOLOS_SCRIPT = """import { Dolos } from "@dodona/dolos-lib";
const [stub, ...files] = process.argv.slice(2);
const report = await new Dolos({ language: "python" }).analyzePaths(files, stub);
for (const pair of report.allPairs()) console.log([pair.leftFile.path, pair.rightFile.path, pair.similarity].join(","));
"""


def dolos_pairs(folder: Path, exercise: str, mods: dict[str, str]) -> dict[tuple[str, str], float]:
    """(a, b) sorted -> Dolos's similarity, the stub as boilerplate (``node`` run in ``folder``)."""
    import subprocess

    (folder / "tkit-dolos.mjs").write_text(DOLOS_SCRIPT, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for sid, code in mods.items():
            (Path(tmp) / f"{sid}.py").write_text(code, encoding="utf-8")
            files.append(str(Path(tmp) / f"{sid}.py"))
        out = subprocess.run(["node", "tkit-dolos.mjs", str(REPO / "exercises" / f"{exercise}.py"), *files],
                             capture_output=True, text=True, cwd=folder, timeout=600, check=True)
    result = {}
    for line in out.stdout.splitlines():
        a, b, similarity = line.rsplit(",", 2)
        result[tuple(sorted((Path(a).stem, Path(b).stem)))] = float(similarity)
    return result


def independent(a: str, b: str) -> bool:
    """Written apart: not the copy and one of its rewrites, nor two rewrites of it."""
    return not (a.startswith("cop") and b.startswith("cop"))


def main() -> None:
    if "--min-size" in sys.argv[1:]:  # the sensitivity of the feature size (structural.MIN_SIZE)
        structural.MIN_SIZE = int(sys.argv[sys.argv.index("--min-size") + 1])
    if "--check" in sys.argv[1:]:
        import check_correct  # noqa: F401 - tests/data/similarity/check_correct.py raises on a wrong module
    dolos_dir = Path(sys.argv[sys.argv.index("--dolos") + 1]).resolve() if "--dolos" in sys.argv else None
    print(f"{'exercise':<22} {'pair':<40} {'copydetect':>10} {'structural':>10}   (* flagged)")
    summary, ranked = [], []
    for exercise, mods in evaluation_classes().items():
        pairs = compare(exercise, mods)
        names = sorted(mods)
        rows = [(a, b, *pairs.get((a, b), (None, None))) for i, a in enumerate(names) for b in names[i + 1:]]
        code = {(a, b): (c.similarity if c else 0.0, bool(c and c.flagged)) for a, b, c, _ in rows}
        struct = {(a, b): (s.structure if s else 0.0, bool(s and s.flagged)) for a, b, _, s in rows}
        shared = {(a, b): s.shared if s else 0 for a, b, _, s in rows}
        for kind in evasion.REWRITES:
            key = tuple(sorted(("copied", f"copy_{kind}")))
            if key[0] in mods:
                print(f"{exercise:<22} {'copied / copy_' + kind:<40} {code[key][0]:>9.2f}{'*' if code[key][1] else ' '}"
                      f" {struct[key][0]:>9.2f}{'*' if struct[key][1] else ' '} ({shared[key]} features shared)")
                summary.append((exercise, kind, code[key], struct[key]))
        ind = [(a, b) for a, b, _, _ in rows if independent(a, b)]
        top_c = max(ind, key=lambda k: code[k][0])
        top_s = max(ind, key=lambda k: struct[k][0])
        print(f"{exercise:<22} {'highest independent (copydetect) ' + '/'.join(top_c):<40} {code[top_c][0]:>9.2f}"
              f"{'*' if code[top_c][1] else ' '} {struct[top_c][0]:>9.2f}")
        print(f"{exercise:<22} {'highest independent (structural) ' + '/'.join(top_s):<40} {code[top_s][0]:>9.2f}"
              f"  {struct[top_s][0]:>9.2f}{'*' if struct[top_s][1] else ' '} ({shared[top_s]} features shared)")
        apart = [k for k in ind if "ind_reference" not in k]
        top_a = max(apart, key=lambda k: struct[k][0])
        print(f"{exercise:<22} {'  without the reference: ' + '/'.join(top_a):<40} {code[top_a][0]:>9.2f}"
              f"  {struct[top_a][0]:>9.2f}{'*' if struct[top_a][1] else ' '} ({shared[top_a]} features shared)")
        flagged = [(k, code[k][1], struct[k][1]) for k in ind if code[k][1] or struct[k][1]]
        for k, c, s in flagged:
            print(f"{exercise:<22} FALSE FLAG {'/'.join(k)}: copydetect {code[k][0]:.2f}{' flagged' if c else ''}, "
                  f"structural {struct[k][0]:.2f}{' flagged' if s else ''}")
        summary.append((exercise, "independent pairs", len(ind), len(flagged)))
        scores = {"copydetect": lambda k: code[k][0], "structural": lambda k: struct[k][0]}
        if dolos_dir is not None:
            dolos = dolos_pairs(dolos_dir, exercise, mods)
            scores["dolos"] = lambda k: dolos.get(k, 0.0)
        copies = [tuple(sorted(("copied", f"copy_{kind}"))) for kind in evasion.REWRITES if f"copy_{kind}" in mods]
        for matcher_name, score in scores.items():
            top = max(score(k) for k in ind)
            ranked.append((exercise, matcher_name, [score(k) for k in copies], top, sum(score(k) > top for k in copies)))
        print(f"{exercise:<22} {len(ind)} independent pairs: copydetect flags {sum(c for _, c, _ in flagged)}, "
              f"structural {sum(s for _, _, s in flagged)}")
    for exercise, matcher_name, values, top, above in ranked:
        print(f"ranking {exercise:<22} {matcher_name:<11} rewrites {' / '.join(f'{v:.2f}' for v in values) or '-'}; "
              f"highest independent {top:.2f}; rewrites above it: {above}")
    print("rewrites scored above every independent pair of their exercise: " + ", ".join(
        f"{m} {sum(r[4] for r in ranked if r[1] == m)}" for m in dict.fromkeys(r[1] for r in ranked)))
    caught = {m: sum(row[2 + i][1] for row in summary if len(row) == 4 and isinstance(row[2], tuple))
              for i, m in enumerate(("copydetect", "structural"))}
    either = sum(row[2][1] or row[3][1] for row in summary if isinstance(row[2], tuple))
    print(f"rewrites flagged: copydetect {caught['copydetect']}, structural {caught['structural']}, either {either} "
          f"of {sum(isinstance(row[2], tuple) for row in summary)}; structural flag: >= {structural.FLAG_THRESHOLD} "
          f"with >= {structural.FLAG_MIN_SHARED} features shared")


if __name__ == "__main__":
    main()
