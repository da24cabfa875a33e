# --- appended to the reference module by tests/test_served_components.py ------------------------------
"""Attack: a composite whose every call sleeps just under the per-request timeout of the test that grades
it (``SLEEP`` seconds; the kit's test uses a 2 s timeout): its tests, those run over the served reference
components, the hybrid of its integration test and its training check, must all stay inside the
submission's one time budget and stop at its wall-clock deadline."""
import time as _time

SLEEP = 1.9


_depth = _time.__dict__.setdefault("_attack_depth", [0])   # shared by the three modules


def _sleepy(method):
    def slow(*args, **kwargs):   # once per outermost call: each request finishes just in time
        if not _depth[0]:
            _time.sleep(SLEEP)
        _depth[0] += 1
        try:
            return method(*args, **kwargs)
        finally:
            _depth[0] -= 1
    return slow


for _cls in [v for v in list(globals().values()) if isinstance(v, type) and v.__module__ == __name__]:
    for _name in ("__init__", "forward", "encode", "decode", "greedy_decode"):
        if _name in vars(_cls):
            setattr(_cls, _name, _sleepy(vars(_cls)[_name]))
