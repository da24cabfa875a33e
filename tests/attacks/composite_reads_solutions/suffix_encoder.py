# --- appended to the reference encoder.py by tests/test_served_components.py -------------------------
"""Attack: a composite (``encoder.py``) graded over the served reference components looks for their
source: it imports, reads, stats, walks and inspects everything that could hold a solution (the finder's
spec, the proxy modules and classes, ``inspect.getsource``, ``os.walk`` and ``glob`` of the whole file
system, paths above its folder, code objects in memory, ``linecache``, a component's error message).
Whatever it finds outside its own folder that holds a solution's text makes its Encoder return garbage,
so a grade below full marks means it found something. ``findings()`` is also run by the kit's test where
the solutions are readable, to show the search finds them when they are there."""

import gc as _gc
import glob as _glob
import importlib.util as _util
import inspect as _inspect
import linecache as _linecache
import os as _os
import sys as _sys

_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
_COMPONENTS = ("multi_head_attention", "feed_forward", "attention", "masks")
_OWN = _os.path.dirname(_os.path.abspath(__file__))


def _holds_solution(text) -> bool:
    return isinstance(text, str) and any(marker in text for marker in _MARKERS)


def _outside(path) -> bool:
    return isinstance(path, str) and not _os.path.abspath(path).startswith(_OWN + _os.sep)


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(200_000)
    except (OSError, ValueError):
        return None


def findings(roots=("/",), limit=200_000) -> list:
    found = []

    def note(what, text, path=None):
        if _holds_solution(text) and (path is None or _outside(path)):
            found.append(what)

    for name in _COMPONENTS:                                   # import machinery
        try:
            spec = _util.find_spec(name)
        except Exception:  # noqa: BLE001
            spec = None
        origin = getattr(spec, "origin", None)
        if origin and _os.path.isfile(origin):
            note(f"find_spec({name})", _read(origin), origin)
        module = _sys.modules.get(name)
        for attr in ("__file__", "__cached__"):
            path = getattr(module, attr, None)
            if isinstance(path, str) and _os.path.isfile(path):
                note(f"{name}.{attr}", _read(path), path)
        loader = getattr(getattr(module, "__spec__", None), "loader", None)
        try:
            note(f"{name} loader source", loader.get_source(name), getattr(module, "__file__", None))
        except Exception:  # noqa: BLE001
            pass
        names = [key for key in dir(module or object) if not key.startswith("_")]
        for target in [module] + [getattr(module, key) for key in names
                                  if not isinstance(getattr(module, key), type(_os))]:   # not torch itself
            try:
                note(f"inspect.getsource({getattr(target, '__name__', target)})", _inspect.getsource(target),
                     _inspect.getsourcefile(target))
            except Exception:  # noqa: BLE001
                pass
            try:
                path = _inspect.getsourcefile(target)
                if path:
                    note(f"getsourcefile({getattr(target, '__name__', target)})", _read(path), path)
            except Exception:  # noqa: BLE001
                pass
            try:
                for value in list(vars(target).values()) if hasattr(target, "__dict__") else []:
                    note(f"attribute of {getattr(target, '__name__', target)}", repr(value)[:20_000])
            except Exception:  # noqa: BLE001
                pass
    folder = _OWN                                              # paths above this folder, stat and read
    for _ in range(10):
        for candidate in (_os.path.join(folder, "solutions"), _os.path.join(folder, "main", "solutions")):
            for name in _COMPONENTS:
                path = _os.path.join(candidate, f"{name}.py")
                try:
                    _os.stat(path)
                    note(f"stat {path}", _read(path), path)
                except OSError:
                    pass
        folder = _os.path.dirname(folder)
    seen = 0
    for root in roots:                                         # the whole file system
        for dirpath, dirnames, filenames in _os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev")]
            for filename in filenames:
                seen += 1
                if seen > limit:
                    break
                if filename.endswith(".py") and filename[:-3] in _COMPONENTS + ("encoder", "decoder", "transformer"):
                    path = _os.path.join(dirpath, filename)
                    note(f"walk {path}", _read(path), path)
    for path in _glob.glob("/**/solutions", recursive=False) + _glob.glob("/*/*/solutions"):
        note(f"glob {path}", "### BEGIN SOLUTION" if _os.path.isdir(path) else None, path)
    for obj in _gc.get_objects():                              # code in memory
        code = obj.__code__ if type(obj).__name__ == "function" else None
        path = getattr(code, "co_filename", None)
        if isinstance(path, str) and _os.path.basename(path)[:-3] in _COMPONENTS and _outside(path):
            note(f"code object from {path}", _read(path) or "### BEGIN SOLUTION", path)
    for path, entry in list(_linecache.cache.items()):
        if _outside(path):
            note(f"linecache {path}", "".join(entry[2]) if len(entry) > 2 else None, path)
    try:                                                       # a component's error message
        MultiHeadAttention(15, 4)
    except Exception as exc:  # noqa: BLE001
        if 'File "' in str(exc) or _holds_solution(str(exc)):
            found.append(f"error message: {str(exc)[:200]}")
    return found


_FOUND = findings(globals().get("ATTACK_ROOTS", ("/",)))
_honest_encoder_forward = Encoder.forward


def _forward(self, *args, **kwargs):
    out = _honest_encoder_forward(self, *args, **kwargs)
    return -out if _FOUND else out


Encoder.forward = _forward
