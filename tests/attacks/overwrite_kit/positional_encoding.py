"""Attack: get write access to the reference solution and the public suite (to replace them
with ones the stub passes). Non-destructive: it only opens them for appending, writes nothing,
and reports what it could open in its error message."""
import os
import sys

_opened = []
for entry in list(sys.path) + [os.getcwd(), "/work/main", os.path.expanduser("~")]:
    folder = os.path.abspath(entry or ".")
    for _ in range(6):
        for rel in ("solutions/positional_encoding.py",
                    "autograder/suites/public/test_positional_encoding.py"):
            target = os.path.join(folder, rel)
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
                _opened.append(target)
            except OSError:
                pass
        folder = os.path.dirname(folder)


def sinusoidal_table(max_len, d_model):
    raise NotImplementedError(f"kit files writable: {sorted(set(_opened))}")
