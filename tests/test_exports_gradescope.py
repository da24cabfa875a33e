"""The Gradescope autograder zip, run the way Gradescope runs it, in a temporary /autograder."""

import json
import os
import shutil
import subprocess
import zipfile

import jsonschema
import pytest

from autograder.exports import gradescope

from conftest import SOLUTIONS_DIR
from kit_venv import make_venv

pytestmark = pytest.mark.slow

EXERCISE = "embedding"  # cheap, no components: the zip grades only it
# The documented fields of results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
TEST_SCHEMA = {
    "type": "object",
    "required": ["name", "score", "max_score", "status", "output", "visibility", "tags"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "score": {"type": "number", "minimum": 0},
        "max_score": {"type": "number", "exclusiveMinimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "output": {"type": "string"},
        "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra_data": {"type": "object"},
    },
}
RESULTS_SCHEMA = {
    "type": "object",
    "required": ["score", "execution_time", "output", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "stdout_visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "tests": {"type": "array", "minItems": 1, "items": TEST_SCHEMA},
        "extra_data": {"type": "object"},
    },
}


@pytest.fixture(scope="module")
def autograder_root(tmp_path_factory):
    """A Gradescope-like root: the zip unpacked in source/, the bundled kit installed in venv/."""
    root = tmp_path_factory.mktemp("gradescope")
    archive = root / "autograder.zip"
    members = gradescope.build_zip(archive, [EXERCISE])
    assert {"setup.sh", "run_autograder"} <= set(members)
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(root / "source")
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    make_venv(root / "venv", root / "source" / "kit")
    return root


def run_autograder(root, files: dict[str, str]) -> dict:
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "PYTHONPATH")}
    env["AUTOGRADER_ROOT"] = str(root)
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, RESULTS_SCHEMA)
    return results


def test_the_zip_bundles_the_instructor_kit_and_the_scripts(autograder_root):
    kit = autograder_root / "source" / "kit"
    assert (kit / "solutions" / f"{EXERCISE}.py").is_file()
    assert (kit / "autograder" / "suites" / "hidden").is_dir() and (kit / "autograder" / "mistakes" / "catalog").is_dir()
    assert not list(kit.rglob("*.pyc")) and not (kit / "tests").exists() and not (kit / ".git").exists()
    where = subprocess.run([str(autograder_root / "venv" / "bin" / "python"), "-c",
                            "import autograder; print(autograder.__file__)"],
                           cwd=autograder_root, capture_output=True, text=True, check=True,
                           env={k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "PYTHONPATH")})
    assert where.stdout.strip() == str(kit / "autograder" / "__init__.py")  # setup's install, not this checkout
    setup = (autograder_root / "source" / "setup.sh").read_text(encoding="utf-8")
    assert 'ROOT="${AUTOGRADER_ROOT:-/autograder}"' in setup and 'pip install' in setup and '-e "$KIT"' in setup
    runner = (autograder_root / "source" / "run_autograder").read_text(encoding="utf-8")
    assert f"--exercise {EXERCISE}" in runner
    for script in ("setup.sh", "run_autograder"):
        subprocess.run(["bash", "-n", str(autograder_root / "source" / script)], check=True)


def test_reference_submission_gets_full_marks_from_public_and_hidden_tests(autograder_root):
    results = run_autograder(autograder_root, {f"{EXERCISE}.py": (SOLUTIONS_DIR / f"{EXERCISE}.py").read_text()})
    assert results["score"] == results["extra_data"]["max_score"] > 0
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in results["tests"])
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    assert all(t["tags"][0] == EXERCISE for t in results["tests"])


def test_buggy_submission_loses_points_with_readable_failures(autograder_root):
    source = (SOLUTIONS_DIR / f"{EXERCISE}.py").read_text()
    buggy = source.replace("return self.embedding(token_ids) * math.sqrt(self.d_model)",
                           "return self.embedding(token_ids)")
    assert buggy != source
    results = run_autograder(autograder_root, {f"{EXERCISE}.py": buggy})
    assert 0 <= results["score"] < results["extra_data"]["max_score"]
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all(t["score"] == 0 and t["output"] for t in failed)


def test_an_ungradable_submission_still_gets_a_results_file(autograder_root):
    results = run_autograder(autograder_root, {f"{EXERCISE}.ipynb": "{not a notebook"})
    assert results["score"] == 0
    assert "could not be graded" in results["output"] and "not a readable Jupyter notebook" in results["output"]


def test_mnist_is_bundled_only_when_the_autoencoder_is_graded(tmp_path):
    """The AutoEncoder's training tests need MNIST on Gradescope: the zip carries the files found
    here (checked against the manifest), and none when the AutoEncoder is not exported."""
    from autograder import mnist

    found = sorted(p.name for split in mnist.available_splits() for p in mnist.locate(split).values())
    assert "t10k-images-idx3-ubyte.gz" in found  # the official test set shipped in datasets/mnist
    with_ae = gradescope.build_zip(tmp_path / "ae.zip", ["autoencoder"])
    assert sorted(m.rsplit("/", 1)[1] for m in with_ae if m.startswith("kit/datasets/mnist/raw/")) == found
    without = gradescope.build_zip(tmp_path / "emb.zip", [EXERCISE])
    assert not [m for m in without if m.startswith("kit/datasets/mnist/") and m.endswith(".gz")]
    assert "kit/datasets/mnist/README.md" in with_ae   # the dataset's licence and citation travel with it
