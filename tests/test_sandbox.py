"""The sandbox around a child (:mod:`autograder.sandbox`: zygote launcher, namespaces, rlimits,
private uid, what the zygote preloads). Facts are measured from inside real children."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from autograder import sandbox
from autograder.commands import doctor
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
    requests (cheaper forks); every child before, during and after that works."""
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


@pytest.mark.slow
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


def test_a_child_starts_with_what_its_seeding_needs_already_imported(tmp_path):
    """numpy.random (a lazy submodule of numpy 2, seeded before every test) comes from the
    zygote, not from an import in each child's first test."""
    from autograder.sandbox.remote import RemoteImpl
    from autograder.sandbox import Limits

    (tmp_path / "probe.py").write_text("import sys\nLOADED = sorted(m for m in ('numpy', 'numpy.random', 'torch') "
                                       "if m in sys.modules)\n")
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20))
    try:
        assert impl.probe.LOADED == ["numpy", "numpy.random", "torch"]
    finally:
        impl.close()
