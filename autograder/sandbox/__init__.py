"""Starting, talking to and killing the child process that runs student code.

The parent side of the trust boundary. :class:`ChildProcess` owns one child: it copies the
submission's ``.py`` files into a fresh scratch directory, has a child started on them and
exchanges :mod:`autograder.child.wire` messages over a private pipe pair. Every wait has a
deadline; while waiting, the child's stdout/stderr is drained into a bounded buffer so a flood
can neither block nor exhaust the parent.

Two launchers (:func:`launcher`):

``zygote`` (Linux, the default there)
    A per-process fork server (:mod:`autograder.sandbox.zygote_parent`) that imported torch once forks the
    child, which then enters new mount/PID/network/IPC/UTS namespaces, pivots into a private
    root (system and Python directories read-only, the submission read-only, a size-capped
    ``tmpfs`` as the only writable place), drops to an unprivileged uid of its own when run as
    root, and applies its rlimits (see :mod:`autograder.child.jail`). Start-up costs a fork,
    not an ``import torch``. Killing it ends its PID namespace: nothing it started survives.
``spawn`` (elsewhere, or ``TKIT_SANDBOX=spawn``)
    ``python -I -c <bootstrap>`` in its own process group with rlimits only (the protections
    this platform lacks are reported by ``tkit doctor`` and :func:`protection_warning`).

Limits are rlimits applied by the child to itself before any student code runs: memory
(``RLIMIT_DATA``, and ``RLIMIT_AS`` set to the address space mapped once torch is loaded, about
3.3 GB for a CUDA build, plus ``memory_bytes``: unlike ``RLIMIT_DATA`` it counts shared anonymous
memory; see :func:`autograder.child.runner.cap_memory`), CPU seconds, file size, processes,
open files; plus the parent's wall-clock deadline on every request, its writes included (a
child that stops reading is killed when the deadline passes).

Modules:

- :mod:`~autograder.sandbox.policy`: limits, environment, hidden paths, the launcher, the
  submission's files;
- :mod:`~autograder.sandbox.process`: the child process and its pipes;
- :mod:`~autograder.sandbox.zygote_parent`: the fork server's parent side (its child side is
  :mod:`autograder.child.zygote_child`);
- :mod:`~autograder.sandbox.remote`: :class:`~autograder.sandbox.remote.RemoteImpl`, the
  ``student`` a test sees; :mod:`~autograder.sandbox.handles`: its handles to objects in the child;
  :mod:`~autograder.sandbox.errors`: :class:`~autograder.sandbox.errors.SubmissionError`, what
  goes wrong there, in a student's words; :mod:`~autograder.sandbox.call_errors`: an exception
  inside student code with the function that raised, its arguments' shapes and the likely cause;
  :mod:`~autograder.sandbox.returns`: the contract's return types, checked where a test receives a value;
- :mod:`~autograder.sandbox.timeshare`: each exercise's share of the submission's time limit;
- :mod:`~autograder.sandbox.served`: the reference components a composite's test runs over,
  computed by a trusted child (the *component server*) and relayed to the student's child, which
  gets them as proxies (:mod:`~autograder.sandbox.served_child`: what ``RemoteImpl`` adds for it).

In: a submission folder (from :mod:`autograder.intake`) and :class:`Limits`. Out: plain data and
plain tensors decoded from the child, or a :class:`~autograder.sandbox.remote.SubmissionError`.
The public names of ``policy`` and ``process`` are importable from here.
"""

from __future__ import annotations

import os
import sys

from autograder.sandbox import zygote_parent
from autograder.sandbox.policy import (CHILD_PACKAGE, LAUNCHERS, MAX_MODULE_BYTES, Limits, clean_env,
                                       copy_submission, hidden_paths, launcher)
from autograder.sandbox.process import (BOOTSTRAP, MAX_OUTPUT_FLOOD, MAX_OUTPUT_KEEP, ChildDied, ChildProcess,
                                        OutputBuffer, ProtocolError, SpawnedChild)

__all__ = ["BOOTSTRAP", "CHILD_PACKAGE", "LAUNCHERS", "MAX_MODULE_BYTES", "MAX_OUTPUT_FLOOD", "MAX_OUTPUT_KEEP",
           "ChildDied", "ChildProcess", "Limits", "OutputBuffer", "ProtocolError", "SpawnedChild", "clean_env",
           "copy_submission", "hidden_paths", "launcher", "protection_warning"]


def protection_warning() -> str | None:
    """A loud, student-data-protecting warning when children run with fewer protections than
    the kit's full sandbox (no namespaces: the child sees the host's files and network), else
    None. Cheap: forks one throw-away process on Linux."""
    try:
        chosen = launcher()
    except ValueError as exc:
        return str(exc)
    if chosen == "spawn":
        return ("WARNING: submissions run without the namespace sandbox on this platform "
                f"({sys.platform}, TKIT_SANDBOX={os.environ.get('TKIT_SANDBOX', '')!r}): only rlimits, a "
                "scratch directory and a scrubbed environment protect this machine; a submission can "
                "read files your user can read and open network connections. See `tkit doctor`.")
    probe = zygote_parent.probe_namespaces()
    if not probe["namespaces"]:
        return ("WARNING: the kernel refused the sandbox's namespaces "
                f"({probe['error']}); submissions run with rlimits"
                + (" and a private uid" if os.geteuid() == 0 else "")
                + " only: they can see the host's files (solutions/ included, where readable) and the "
                "network. Run as root, or enable unprivileged user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1). See `tkit doctor`.")
    return None
