# Appended after transformer_bigram.py: wraps the kit's capture routine and adds to a node a
# keyword argument whose *name* is Python code. The earlier trusted trainer generated source from
# the graph (torch.fx) and copied keyword names into it verbatim, so this code ran in the trusted
# child, beside the held-out pairs. The kit now validates every keyword name against the
# operator's schema and refuses the graph before anything of it runs.
import importlib as _importlib
import sys as _sys

_PAYLOAD = ("alpha=1); __import__('os').environ.__setitem__('TKIT_OWNED', 'yes'); "
            "_ = (__import__('builtins').print('owned')")


def _kit_tasks():
    # the kit's child package (its name ends in ".tasks"); imported here when this child has not yet
    # (a composite's child, served the reference components, imports it on its first task)
    _names = [n for n in list(_sys.modules) if n.endswith(".tasks")] or \
        [n[:-len(".runner")] + ".tasks" for n in list(_sys.modules) if n.endswith(".runner")]
    for _name in _names:
        _module = _importlib.import_module(_name)
        if isinstance(getattr(_module, "TASKS", None), dict) and "capture_transformer" in _module.TASKS:
            return _module
    return None


_TASKS = _kit_tasks()
if _TASKS is not None:
    _capture = _TASKS.TASKS["capture_transformer"]

    def _with_code(*args, **kwargs):
        captured = _capture(*args, **kwargs)
        for _graph in (captured.get("train"), captured.get("eval")):
            if isinstance(_graph, dict) and _graph.get("nodes"):
                _graph["nodes"][0]["kwargs"][_PAYLOAD] = 1
        return captured

    _TASKS.TASKS["capture_transformer"] = _with_code
