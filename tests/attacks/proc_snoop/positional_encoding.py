"""Attack: read other processes' command lines, environment and memory maps through /proc to
find the kit (solutions/ path) or the grader's secrets, then serve the reference solution."""
import os
import re

_found = None
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self"]:
    for part in ("cmdline", "environ", "maps"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        for match in re.findall(r"(/[\w./-]+?)/(?:autograder|solutions|\.venv)", text):
            candidate = os.path.join(match, "solutions", "positional_encoding.py")
            if _found is None and os.path.isfile(candidate):
                _found = candidate
    try:  # the grader's memory, if we may read it
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.read(1)
    except OSError:
        pass
if _found is None:
    raise NotImplementedError("nothing found in /proc")
exec(compile(open(_found).read(), _found, "exec"))
