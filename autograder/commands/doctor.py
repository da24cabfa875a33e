"""``tkit doctor``: which sandbox protections are active on this machine, measured from inside
a child, and whether two children can pass data through the kernel (locks, inotify, IPC,
abstract sockets, ``/proc``), measured from inside two."""

from __future__ import annotations

import click

from autograder.commands.options import lang_option


def gather() -> dict:
    """Start one child the way grading does and ask it what it can see and do.

    Returns ``{"launcher", "sandbox" (the child's own report), "probe" (tasks.probe's facts),
    "checks": [(protection, active: bool, detail), ...]}``; the checks end with the seccomp filter
    and one row per kernel path between two children (:func:`channel_checks`).
    """
    import os
    import tempfile
    from pathlib import Path

    from autograder import paths, sandbox
    from autograder.sandbox.remote import RemoteImpl

    hidden = sandbox.hidden_paths()
    outside = [str(paths.kit_root()), tempfile.gettempdir()]
    with tempfile.TemporaryDirectory(prefix="tkit-doctor-") as folder:
        remote = RemoteImpl(Path(folder), sandbox.Limits(call_timeout=20), label="doctor")
        try:
            remote.start()
            facts = remote.task("probe", hidden, outside)
            info = dict(remote.info)
        finally:
            remote.close()
    box = info.get("sandbox", {})
    limits = facts["rlimits"]
    root = os.geteuid() == 0
    checks = [
        ("rlimits (memory RLIMIT_DATA, CPU, file size, processes)",
         all(limits[k] not in (-1, None) for k in ("RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC")),
         ", ".join(f"{k[7:]}={v}" for k, v in limits.items())),
        ("memory cap counting shared memory (RLIMIT_AS; RLIMIT_DATA misses MAP_SHARED)",
         box.get("memory_cap") == "RLIMIT_AS", _memory_detail(box)),
        ("namespaces (mount, PID, network, IPC, UTS)", bool(box.get("namespaces")),
         box.get("namespaces_error") or ("user namespace" if box.get("user_namespace") else "as root")),
        ("private file system (no solutions/, hidden tests, kit)",
         box.get("filesystem") == "private root" and not facts["hidden_seen"],
         "sees: " + (", ".join(facts["hidden_seen"]) or "none of them")),
        ("only the scratch directory is writable", facts["cwd_writable"] and not facts["writable"],
         "writable outside: " + (", ".join(facts["writable"]) or "none")),
        ("network isolation", not facts["network"].startswith("connected"), facts["network"]),
        ("privilege drop (root -> private uid, no_new_privs)" if root else "no_new_privs (not root: no drop needed)",
         (facts["uid"] != 0 or not root) and facts["no_new_privs"] == "1",
         f"uid {facts['uid']}, NoNewPrivs {facts['no_new_privs']}"),
        ("clean-up of everything a child starts (PID namespace)", bool(box.get("namespaces")),
         "PID namespace: its end kills all" if box.get("namespaces") else
         "process group only: a daemon that calls setsid() may survive"),
    ]
    checks.append(("seccomp filter (no file locks, inotify, keyrings, io_uring)",
                   box.get("syscall_filter") == "seccomp", box.get("syscall_filter", "not reported")))
    checks += channel_checks()
    return {"launcher": info.get("launcher"), "sandbox": box, "probe": facts, "checks": checks}


CHANNEL_LABELS = {
    "posix_lock": "POSIX byte-range locks (F_SETLK/F_GETLK)",
    "ofd_lock": "open-file-description locks (F_OFD_*)",
    "flock": "flock locks",
    "inotify": "inotify watches on shared files",
    "sysv_shm": "SysV IPC (shared memory)",
    "posix_mq": "POSIX message queues",
    "posix_shm": "POSIX shared memory (/dev/shm)",
    "abstract_socket": "abstract Unix sockets",
    "proc_sys": "writable /proc/sys and /sys entries",
}


def channel_checks(limits=None) -> list[tuple[str, bool, str]]:
    """Each kernel path between two children (:mod:`autograder.child.channels`), measured from
    inside two children started as grading starts them (``limits``: their :class:`Limits`; the
    kit's tests turn the seccomp filter off to show what it closes): ``[(name, closed, detail)]``,
    detail starting with "closed" or "OPEN"."""
    import random
    import tempfile
    from pathlib import Path

    from autograder import sandbox
    from autograder.child import channels
    from autograder.sandbox.remote import RemoteImpl

    limits = limits or sandbox.Limits(call_timeout=20)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tkit-doctor-") as folder:
        sender, receiver = RemoteImpl(Path(folder), limits, label="doctor"), RemoteImpl(Path(folder), limits, label="doctor")
        try:
            sender.start()
            receiver.start()
            for name in channels.CHANNELS:
                token, value = random.randrange(1, 1 << 30), random.randrange(1, 256)
                listened = receiver.task("channel", "listen", name, token)
                sent = sender.task("channel", "send", name, token, value)
                got = receiver.task("channel", "receive", name, token)
                for side in (sender, receiver):
                    side.task("channel", "close", name, token)
                why = got["error"] or sent["error"] or listened["error"] or "nothing arrived"
                if name == "proc_sys":
                    closed = got["value"] is None
                    detail = "closed: no entry outside the child's namespaces" if closed else \
                        f"OPEN: {got['value']} entries can be opened for writing"
                else:
                    closed = got["value"] != value
                    detail = f"closed ({why})" if closed else f"OPEN: the value sent ({value}) arrived"
                rows.append((f"no channel between children: {CHANNEL_LABELS[name]}", closed, detail))
        finally:
            sender.close()
            receiver.close()
    return rows


def cjk_font(run=None) -> str | None:
    """The family name of a font on this machine that covers Korean (asked of fontconfig's
    ``fc-list :lang=ko family``), or None where there is none or no ``fc-list``.

    The HTML reports name common CJK fonts in their font stack (``templates/_style.html``); a
    browser on a machine with none of them draws Korean text as boxes. ``run`` replaces
    :func:`subprocess.run` (tests)."""
    import subprocess

    run = run or subprocess.run
    try:
        out = run(["fc-list", ":lang=ko", "family"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    families = [line.split(",")[0].strip() for line in out.splitlines() if line.strip()]
    return sorted(families)[0] if families else None


def font_note(family: str | None) -> str:
    """One line for ``tkit doctor`` on the Korean font (not a protection: no effect on the exit code)."""
    if family:
        return f"Korean font for the reports: {family}"
    return ("note: no font covering Korean was found (fc-list :lang=ko); Korean HTML reports will show "
            "boxes in a browser on this machine. Install one, e.g. `apt install fonts-noto-cjk` or "
            "`fonts-nanum`.")


def _memory_detail(box: dict) -> str:
    """Which memory cap is in force in the child, in words (see ``runner.cap_memory``)."""
    cap, mapped = box.get("memory_cap", "unknown"), box.get("mapped_at_start", 0)
    if cap != "RLIMIT_AS":
        return f"{cap}: shared anonymous memory is not capped"
    total = box.get("memory_cap_bytes", 0)
    return (f"RLIMIT_AS {total / 2**30:.1f} GiB = {mapped / 2**30:.1f} GiB mapped at start (torch) "
            f"+ {(total - mapped) / 2**30:.1f} GiB for the submission")


@click.command(name="doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the raw report as JSON.")
@lang_option()
def command(as_json, lang):
    """Report which sandbox protections are active on this machine (exit code 1 when any is missing)."""
    import json

    from rich.console import Console
    from rich.table import Table

    from autograder.i18n import _

    report = gather()
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
    else:
        table = Table(title=f"tkit sandbox (launcher: {report['launcher']})")
        table.add_column(_("protection"))
        table.add_column(_("active"))
        table.add_column(_("detail"))
        yes, no = "[green]" + _("yes") + "[/]", "[red]" + _("NO") + "[/]"
        for name, active, detail in report["checks"]:
            table.add_row(name, yes if active else no, str(detail))
        Console().print(table)
        click.echo(font_note(cjk_font()))
    missing = [name for name, active, _ in report["checks"] if not active]
    if missing:
        click.secho("WARNING: missing protections: " + "; ".join(missing), fg="yellow", err=True)
        raise SystemExit(1)
