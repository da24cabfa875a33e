"""What :class:`autograder.sandbox.remote.RemoteImpl` adds for a child served reference components.

A composite's test gives its child the components it imports as proxies of the reference
(:mod:`autograder.sandbox.served`): ``begin_test`` sets ``served``, the child is told which
modules to serve before its next request (:meth:`ServedComponents._install`), and the callbacks
it sends meanwhile go to the submission's component server (``server``). What such a child
prints is kept out of every report: it ran over the reference.
"""

from __future__ import annotations

import time

from autograder.i18n import _
from autograder.sandbox.errors import SubmissionError
from autograder.sandbox.process import ChildDied, ChildProcess, ProtocolError

INSTALL_TIMEOUT = 15.0   # seconds the child may take to install its proxies (a spawned child imports torch._dynamo then)


class ServedComponents:
    """What :class:`autograder.sandbox.remote.RemoteImpl` adds for served components: its child
    gets ``served`` (set by ``begin_test``) as proxy modules, its callbacks go to ``server``."""

    server = None   # the submission's autograder.sandbox.served.ComponentServer, when one serves
    deadline: float | None = None
    served: tuple[str, ...] = ()
    _installed: tuple = (None, ())

    def _printed(self, output: str) -> str:
        """What the child printed, as a report may show it: nothing while components are served
        (what code running over the reference prints never reaches a student's report)."""
        return "" if self.served else output

    def _install(self, child: ChildProcess, timeout: float) -> None:
        """Have ``child`` serve :attr:`served` as proxy modules (the ``components`` request; the
        child is fresh or has imported none of them, see :meth:`begin_test`)."""
        if self.served or self._installed[1]:
            listing = self.server.listing(self.served) if self.served else {}
            try:
                limit = max(timeout, INSTALL_TIMEOUT)
                if self.deadline is not None:   # never past the submission's wall-clock deadline
                    limit = min(limit, max(0.1, self.deadline - time.monotonic()))
                child.request("components", timeout=limit, listing=listing)
            except (ChildDied, ProtocolError):
                self._died()
                raise SubmissionError("crash", _("the submission's process died while the grader prepared it")) from None
        self._installed = (self._gen, self.served)

    def _callback(self, message: dict, tensors: dict, deadline: float):
        """A served component's call from the child, answered by :attr:`server` before ``deadline``."""
        return self.server.handle(message, tensors, deadline, self.served)

