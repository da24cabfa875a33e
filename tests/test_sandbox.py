"""The sandbox around a child (zygote launcher, namespaces, rlimits, private uid) and the batch
controls (shards, Ctrl-C). Facts are measured from inside real children."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from autograder import sandbox
from autograder.commands import doctor
from autograder.run import batch
from autograder.sandbox import Limits
from autograder.sandbox import zygote_parent
from autograder.sandbox.remote import RemoteImpl, SubmissionError

TOY = '''
import os, signal, sys, time

def fork_until_refused():
    made = 0
    while made < 1000:
        try:
            pid = os.fork()
        except OSError:
            return made
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
    return made

def allocate(mb):
    return len(bytearray(mb * 2**20))

def write_file(path, mb):
    with open(path, "wb") as f:
        for _ in range(mb):
            f.write(b"x" * 2**20)
    return os.path.getsize(path)

def share(mb):
    import mmap
    shared = mmap.mmap(-1, mb * 2**20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    for offset in range(0, mb * 2**20, 2**20):
        shared[offset] = 1
    return len(shared)

def start_daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(600)
        os._exit(0)
    return os.getuid()
'''


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "toy.py").write_text(textwrap.dedent(TOY))
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20, memory_bytes=3 * 1024**3, file_bytes=8 * 2**20,
                                       nproc=32, work_bytes=32 * 2**20))
    yield impl
    impl.close()


def _uid_processes(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                found.append(int(entry))
        except OSError:
            pass
    return found


def test_the_child_sees_no_kit_no_network_and_writes_only_its_scratch(toy):
    toy.start()
    facts = toy.task("probe", sandbox.hidden_paths(), ["/work", "/tmp", "/usr"])
    box = toy.info["sandbox"]
    assert toy.info["launcher"] == "zygote"
    assert box["namespaces"] and box["filesystem"] == "private root"
    assert sandbox.hidden_paths() and facts["hidden_seen"] == []
    assert facts["writable"] == [] and facts["cwd_writable"]
    assert not facts["network"].startswith("connected")
    assert facts["uid"] == box["uid"] >= zygote_parent.UID_BASE and facts["no_new_privs"] == "1"
    assert facts["pid"] == 2 and facts["processes_visible"] == 2  # its init and itself
    assert facts["rlimits"]["RLIMIT_DATA"] == 3 * 1024**3 and facts["rlimits"]["RLIMIT_NPROC"] == 32


def test_memory_file_size_scratch_and_process_caps_hold(toy):
    assert toy.toy.allocate(100) == 100 * 2**20
    with pytest.raises(SubmissionError, match="MemoryError"):
        toy.toy.allocate(4096)
    with pytest.raises(SubmissionError, match="File too large"):
        toy.toy.write_file("big.bin", 9)
    for i in range(3):  # the capped 8 MB big.bin + 3 x 7 MB fit the 32 MB scratch; a fourth does not
        toy.toy.write_file(f"part{i}.bin", 7)
    with pytest.raises(SubmissionError, match="No space left"):
        toy.toy.write_file("part3.bin", 7)
    made = toy.toy.fork_until_refused()
    assert 0 < made < 32


def test_shared_memory_counts_against_the_memory_cap(tmp_path):
    """RLIMIT_DATA misses mmap(MAP_SHARED | MAP_ANONYMOUS); the child's RLIMIT_AS (what torch
    mapped at start + memory_bytes) does not."""
    (tmp_path / "toy.py").write_text(textwrap.dedent(TOY))
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20, memory_bytes=2**30))
    try:
        assert impl.toy.share(64) == 64 * 2**20
        with pytest.raises(SubmissionError, match="Cannot allocate memory"):
            impl.toy.share(1536)
        box = impl.info["sandbox"]
        assert box["memory_cap"] == "RLIMIT_AS"
        assert box["memory_cap_bytes"] == box["mapped_at_start"] + 2**30 and box["mapped_at_start"] > 0
    finally:
        impl.close()


def test_a_daemon_does_not_outlive_its_child(toy):
    uid = toy.toy.start_daemon()
    time.sleep(0.5)
    assert len(_uid_processes(uid)) >= 2  # the child's worker and the daemon (and its init is root)
    toy.close()
    deadline = time.monotonic() + 10
    while _uid_processes(uid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _uid_processes(uid) == []


def test_children_start_in_a_fraction_of_an_import_torch(tmp_path):
    sandbox.ChildProcess(tmp_path, Limits()).close()  # the zygote's one-time start
    t0 = time.perf_counter()
    child = sandbox.ChildProcess(tmp_path, Limits())
    child.wait_ready()
    child.close()
    assert time.perf_counter() - t0 < 2.0  # `import torch` alone takes 3-5 s on these machines


def _anon_huge_kb(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next((int(line.split()[1]) for line in f if line.startswith("AnonHugePages:")), 0)


def test_the_zygote_moves_to_huge_pages_after_a_few_children_and_children_still_work(tmp_path):
    """After HUGE_PAGES_AFTER children the zygote collapses its memory into huge pages between
    requests (cheaper forks, issue 16); every child before, during and after that works."""
    from autograder.child import hugepages, zygote_child

    (tmp_path / "m.py").write_text("import torch\ndef f(x):\n    return torch.nn.functional.softmax(x, -1)\n")
    import torch

    x = torch.tensor([[1.0, 2.0, 3.0]])
    for _ in range(zygote_child.HUGE_PAGES_AFTER + 4):
        impl = RemoteImpl(tmp_path, Limits())
        out = impl.m.f(x)
        impl.close()
        assert out.allclose(x.softmax(-1))
    if not hugepages.available():
        pytest.skip("this kernel offers no transparent huge pages")
    zygote = zygote_parent.get()
    deadline = time.monotonic() + 30
    while _anon_huge_kb(zygote.proc.pid) == 0 and time.monotonic() < deadline:
        sandbox.ChildProcess(tmp_path, Limits()).close()  # requests between the collapse steps
        time.sleep(0.2)
    assert _anon_huge_kb(zygote.proc.pid) > 0


def test_huge_page_pieces_cover_the_aligned_large_regions_exactly():
    from autograder.child import hugepages

    spans = hugepages.regions()
    assert spans, "a process with torch imported has large anonymous regions"
    for lo, hi in spans:
        assert lo % hugepages.HUGE == 0 and hi % hugepages.HUGE == 0 and hi - lo >= hugepages.MIN_REGION
    pieces = list(hugepages.chunks([(0, 40 << 20), (64 << 20, 72 << 20)], step=16 << 20))
    assert pieces == [(0, 16 << 20), (16 << 20, 16 << 20), (32 << 20, 8 << 20), (64 << 20, 8 << 20)]
    assert hugepages.collapse_step(iter(())) is False


def test_the_spawn_launcher_degrades_loudly(tmp_path, monkeypatch):
    monkeypatch.setenv("TKIT_SANDBOX", "spawn")
    assert sandbox.launcher() == "spawn"
    warning = sandbox.protection_warning()
    assert warning.startswith("WARNING") and "rlimits" in warning
    report = doctor.gather()
    active = {name.split(" (")[0]: ok for name, ok, _ in report["checks"]}
    assert report["launcher"] == "spawn"
    assert set(report["sandbox"]) == {"memory_cap", "memory_cap_bytes", "mapped_at_start",
                                      "syscall_filter"}  # no namespaces
    assert active["namespaces"] is False and active["rlimits"] is True
    assert active["memory cap counting shared memory"] is (report["sandbox"]["memory_cap"] == "RLIMIT_AS")
    monkeypatch.setenv("TKIT_SANDBOX", "bwrap")
    with pytest.raises(ValueError, match="TKIT_SANDBOX must be one of zygote, spawn"):
        sandbox.launcher()


def test_this_machine_allows_the_namespaces():
    assert zygote_parent.probe_namespaces() == {"namespaces": True, "error": ""}
    assert sandbox.protection_warning() is None


def test_shards_are_disjoint_cover_the_class_and_are_balanced():
    todo = [(f"s{i:02d}", Path(f"/c/s{i:02d}")) for i in (7, 3, 11, 0, 5, 9, 1)]
    shards = [batch.shard(todo, k, 3) for k in range(3)]
    assert [sid for sid, _ in shards[0]] == ["s00", "s05", "s11"]
    assert sorted(sid for s in shards for sid, _ in s) == sorted(sid for sid, _ in todo)
    assert [len(s) for s in shards] == [3, 2, 2]
    assert batch.shard(list(reversed(todo)), 1, 3) == shards[1]
    assert batch.parse_shard("2/5") == (2, 5)
    for bad in ("5/5", "1", "a/b", "-1/3", "0/0"):
        with pytest.raises(ValueError, match="K/N"):
            batch.parse_shard(bad)


def test_ctrl_c_keeps_every_finished_result(tmp_path, monkeypatch):
    graded = []

    def fake_grade(path, options):
        graded.append(path.name)
        return {"score": 1.0, "path": str(path)}

    from autograder.run import grading

    monkeypatch.setattr(grading, "grade_submission", fake_grade)
    seen = []

    def on_result(sid, path, result):
        seen.append((sid, result["score"]))
        if len(seen) == 2:
            raise KeyboardInterrupt

    todo = [(f"s{i}", tmp_path / f"s{i}") for i in range(5)]
    with pytest.raises(batch.Interrupted) as info:
        batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=1)
    assert (info.value.done, info.value.total) == (2, 5)
    assert seen == [("s0", 1.0), ("s1", 1.0)] and graded == ["s0", "s1"]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=0)


SHARED_BATCH = """
import json, sys
from pathlib import Path
from autograder.run import batch
from autograder.sandbox import zygote_parent

marker = Path(sys.argv[2])
started = zygote_parent.Zygote.__init__
def counted(self, *args, **kwargs):   # every zygote started, here or in a (forked) worker
    with open(marker, "a") as f:
        f.write("zygote\\n")
    started(self, *args, **kwargs)
zygote_parent.Zygote.__init__ = counted
assert "torch" not in sys.modules
todo = [(f"s{i}", Path(sys.argv[1])) for i in range(3)]
scores = []
stats = batch.grade_many(todo, Path(sys.argv[3]), workers=2, on_result=lambda sid, p, r: scores.append(r.score),
                         options=dict(names=["masks"], visibility=("public",), seed=1))
print(json.dumps({"scores": scores, "errors": stats.errors}))
"""


def test_a_batch_started_without_torch_forks_its_workers_and_shares_one_zygote(tmp_path):
    """`tkit grade --workers 2`: one zygote and one import of torch here for both workers (forked),
    whose children grade as usual."""
    import json
    import subprocess
    import sys

    if sandbox.launcher() != "zygote":
        pytest.fail("this test needs the zygote launcher (Linux)")
    sub = tmp_path / "sub"
    sub.mkdir()
    repo = Path(__file__).resolve().parent.parent
    (sub / "masks.py").write_text((repo / "solutions" / "masks.py").read_text())
    marker = tmp_path / "marker"
    proc = subprocess.run([sys.executable, "-c", SHARED_BATCH, str(sub), str(marker), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["errors"] == 0 and len(got["scores"]) == 3
    assert min(got["scores"]) == max(got["scores"]) > 0
    assert marker.read_text() == "zygote\n"
