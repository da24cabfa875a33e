"""No channel between two sandboxed children (child/syscalls.py, child/channels.py, tkit doctor).

Each kernel path of :mod:`autograder.child.channels` is first shown to carry a value between two
plain processes on this machine (the probe works); then between two children started as the
kit starts them, with the seccomp filter turned off (the namespaces alone leave the lock and
inotify paths open, which is why the filter exists); then with the filter: nothing arrives.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.child import channels, syscalls
from autograder.commands import doctor
from autograder.sandbox import Limits, launcher, zygote_parent
from autograder.sandbox.remote import RemoteImpl

CHILD = Path(__file__).resolve().parent.parent / "autograder" / "child"
DRIVER = ("import sys, json; sys.path.insert(0, sys.argv[1]); import channels\n"
          "for line in sys.stdin:\n    print(json.dumps(channels.run(*json.loads(line))), flush=True)\n")
LOCKS = ("posix_lock", "ofd_lock", "flock", "inotify")  # what the namespaces do not close
PAIRS = [name for name in channels.CHANNELS if name != "proc_sys"]


def _sandboxed() -> bool:
    return sys.platform.startswith("linux") and launcher() == "zygote" and zygote_parent.probe_namespaces()["namespaces"]


needs_sandbox = pytest.mark.skipif(not _sandboxed(), reason="needs the zygote launcher with namespaces (Linux)")


class Plain:
    """A plain Python process (no sandbox) running the probe's steps."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(CHILD)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def step(self, *args):
        self.proc.stdin.write(json.dumps(args) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _pass(sender, receiver, name):
    """Send a random value through ``name``; what the receiver got (None: nothing)."""
    token, value = random.randrange(1, 1 << 30), random.randrange(1, 256)
    try:
        receiver.step("listen", name, token)
        sent = sender.step("send", name, token, value)
        got = receiver.step("receive", name, token)
    finally:
        sender.step("close", name, token)
        receiver.step("close", name, token)
    return value, got, sent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux kernel paths")
def test_each_channel_carries_a_value_between_two_plain_processes():
    """Without any defence every probe works: the value sent arrives."""
    sender, receiver = Plain(), Plain()
    try:
        for name in PAIRS:
            if name == "posix_shm" and not os.path.isdir("/dev/shm"):
                continue
            value, got, sent = _pass(sender, receiver, name)
            assert got["value"] == value, (name, sent, got)
        if os.geteuid() == 0:  # root outside the sandbox can open /proc/sys entries for writing
            assert receiver.step("receive", "proc_sys", 1)["value"]
    finally:
        sender.close()
        receiver.close()


def _rows(limits):
    return {name.split(": ", 1)[1]: (closed, detail) for name, closed, detail in doctor.channel_checks(limits)}


@needs_sandbox
def test_without_the_filter_locks_and_inotify_pass_between_two_children():
    """The namespaces close IPC, abstract sockets and /proc; the locks and inotify on the files
    both children see through their read-only bind mounts stay open without the filter."""
    rows = _rows(Limits(call_timeout=20, syscall_filter=False))
    for name, label in doctor.CHANNEL_LABELS.items():
        closed, detail = rows[label]
        assert closed is (name not in LOCKS), (name, detail)


@needs_sandbox
def test_no_channel_between_two_children():
    """With the kit's sandbox (the filter on) nothing passes, and a denied call fails with EPERM
    (the child lives on)."""
    probe = RemoteImpl(Path(__file__).parent, Limits(call_timeout=20))
    try:
        probe.start()
        probe.task("ping")
        if probe.info["sandbox"].get("syscall_filter") != "seccomp":
            pytest.skip(f"no seccomp here: {probe.info['sandbox'].get('syscall_filter')}")
        token = random.randrange(1, 1 << 30)
        assert probe.task("channel", "send", "posix_lock", token, 7)["error"].startswith("EPERM")
        assert probe.task("ping", 3) == 3
        probe.task("channel", "close", "posix_lock", token)
    finally:
        probe.close()
    rows = _rows(Limits(call_timeout=20))
    assert all(closed for closed, _ in rows.values()), rows
    assert all(detail.startswith("closed") for _, detail in rows.values()), rows


@needs_sandbox
def test_torch_trains_under_the_filter(tmp_path):
    """Nothing the kit or torch needs in the child takes a lock: a model trains with an
    optimizer and a DataLoader (the training tasks' path) under the filter."""
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def run():\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))\n"
        "    opt = torch.optim.Adam(model.parameters(), lr=0.01)\n"
        "    data = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=16, shuffle=True)\n"
        "    for x, y in data:\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "    torch.save(model.state_dict(), 'model.pt')\n"
        "    return float(loss)\n")
    impl = RemoteImpl(tmp_path, Limits(call_timeout=60, preload_training=True))
    try:
        assert impl.train.run() >= 0
        if not syscalls.prepare():  # the binding is installed here: the filter was on
            assert impl.info["sandbox"]["syscall_filter"] == "seccomp"
    finally:
        impl.close()
