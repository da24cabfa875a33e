"""The child process: imports a submission's modules and serves the parent's requests.

Started by :mod:`autograder.sandbox` as ``python -I -c <bootstrap>`` with a copy of this
package on ``sys.path`` and nothing else of the kit. It applies its resource limits,
imports torch *before* the submission folder is put first on ``sys.path`` (so a
student's ``torch.py`` cannot shadow it), and then answers one request at a time on
the pipe pair it was given:

``hello``                              -> versions and pid
``import {module}``                    -> a ref to the student's module
``getattr {ref, name}``                -> the attribute (plain data, tensor or a new ref)
``call {ref, args, kwargs}``           -> the call's return value
``callmethod {ref, name, args, kwargs}`` -> ``getattr`` + ``call`` in one round trip (a ref's
                                       record lists the names worth it: :func:`callable_names`)
``list {ref}``                         -> ``list(obj)`` (bounded)
``seed {seed}``                        -> seeds torch, random and numpy
``reset {seed?}``                      -> drops every ref but the modules', puts back the
                                       process-wide state of :mod:`.state`, then seeds
``fresh``                              -> before another exercise's tests: drops every ref and
                                       the student's modules (imported again on use), puts
                                       back torch's namespaces and ``sys.modules`` too, empties
                                       the working directory; ``{"left": [...]}`` names what
                                       could not be undone (the parent then replaces the child)
``task {name, args, kwargs}``          -> a kit-provided routine of :mod:`.tasks`
``components {listing}``               -> serve these reference components as proxy modules from
                                       now on (:mod:`.proxies`; their calls are callbacks to the
                                       parent, :mod:`.components`); ``fresh`` stops serving them

A reply may carry ``forbidden``: the ``[api, module]`` uses of the functions and classes the contract
forbids that the request's student code reached (:mod:`.forbidden`).

Everything that goes wrong inside student code comes back as an error record
(``kind`` in missing_file, syntax_error, import_error, not_implemented, system_exit,
exception, encode_error) with only the submission's own traceback frames. Nothing
the child says is trusted by the parent: it is decoded as data and checked there.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import sys
import types

from . import forbidden, frames, state, wire
# the process's own set-up, re-exported (the zygote and the spawn bootstrap call them from here)
from .process_setup import RLIMITS, apply_limits, cap_memory, import_trusted, seed_everything  # noqa: F401

MAX_TEXT = 4000
MAX_LIST = 10_000


class Server:
    """Holds the refs handed to the parent and dispatches requests."""

    def __init__(self, submission: str, info: dict | None = None):
        self.submission = os.path.realpath(submission)
        self.folder = os.path.abspath(submission)  # as on sys.path (student modules' __file__)
        self.info = dict(info or {})  # extra facts for ``hello`` (the sandbox's protections)
        self.refs: dict[int, object] = {}
        self.next_id = itertools.count(1)
        self.described: set[str] = set()  # the keys whose callable names were sent (make_ref)
        self.start_state = state.capture()  # before any student code: what reset and fresh put back

    # -- values ---------------------------------------------------------------
    def make_ref(self, obj) -> dict:
        """The ref record of ``obj`` (kept in :attr:`refs`): its id and class key ``ck``; the first
        record of each class (or module) also gives its ``type``, ``mro`` and callable names,
        which the parent keeps by ``ck``."""
        ref_id = next(self.next_id)
        self.refs[ref_id] = obj
        kind = type(obj)
        name = f"{kind.__module__}.{kind.__qualname__}"
        key = f"module {obj.__name__}" if isinstance(obj, types.ModuleType) else name
        rec = {"t": "ref", "id": ref_id, "ck": key, "callable": callable(obj)}
        if key not in self.described:  # once per class (or module) and child: see callable_names
            self.described.add(key)
            mro = [f"{c.__module__}.{c.__qualname__}" for c in getattr(kind, "__mro__", (kind,))]
            rec.update(type=name, mro=mro[:12], calls=callable_names(obj))
        return rec

    def decode(self, value, tensors):
        def proxy(rec):
            if rec["id"] not in self.refs:
                raise KeyError(f"unknown handle {rec['id']}")
            return self.refs[rec["id"]]

        out = wire.decode(value, tensors, proxy)
        return out

    def decode_args(self, req, tensors):
        args = self.decode(req.get("args", {"t": "tuple", "v": []}), tensors)
        kwargs = self.decode(req.get("kwargs", {"t": "dict", "v": []}), tensors)
        return self._restore_grad(args), {k: self._restore_grad(v) for k, v in kwargs.items()}

    def _restore_grad(self, value):
        import torch

        if isinstance(value, torch.Tensor) and wire.tensor_info(value).get("rg"):
            return value.requires_grad_(True)
        if isinstance(value, tuple):
            return tuple(self._restore_grad(v) for v in value)
        if isinstance(value, list):
            return [self._restore_grad(v) for v in value]
        return value

    # -- requests ----------------------------------------------------------------
    def handle(self, req: dict, tensors: dict):
        op = req.get("op")
        if op == "hello":
            import torch

            return {"pid": os.getpid(), "torch": str(torch.__version__), "python": sys.version.split()[0],
                    **self.info}
        if op == "import":
            return importlib.import_module(_module_name(req.get("module")))
        if op == "getattr":
            return getattr(self.refs[req["ref"]], str(req["name"]))
        if op == "call":
            args, kwargs = self.decode_args(req, tensors)
            return self.refs[req["ref"]](*args, **kwargs)
        if op == "callmethod":
            args, kwargs = self.decode_args(req, tensors)
            return getattr(self.refs[req["ref"]], str(req["name"]))(*args, **kwargs)
        if op == "list":
            return list(itertools.islice(iter(self.refs[req["ref"]]), MAX_LIST))
        if op == "seed":
            seed_everything(int(req["seed"]))
            return None
        if op == "reset":
            # drop the handles of the previous test but keep the modules' (they stay imported);
            # no gc.collect(): with torch loaded it costs ~150 ms, and refcounting frees the rest
            self.refs = {k: v for k, v in self.refs.items() if isinstance(v, types.ModuleType)}
            state.restore(self.start_state)
            if req.get("seed") is not None:
                seed_everything(int(req["seed"]))
            return None
        if op == "fresh":
            return self.fresh()
        if op == "components":
            from . import proxies

            return proxies.install(req.get("listing") if isinstance(req.get("listing"), dict) else {})
        if op == "task":
            from . import tasks

            args, kwargs = self.decode_args(req, tensors)
            return tasks.run(str(req["name"]), *args, **kwargs)
        raise ValueError(f"unknown op {op!r}")

    def fresh(self) -> dict:
        """The ``fresh`` request (see the module docstring): ``{"left": [what could not be undone]}``."""
        from . import proxies

        proxies.uninstall()
        self.refs = {}
        self.described = set()
        folders = (self.submission + os.sep, self.folder + os.sep)
        known = self.start_state.modules
        for name in [n for n in sys.modules if n not in known]:  # imported since: few
            origin = getattr(sys.modules[name], "__file__", None)
            if isinstance(origin, str) and origin.startswith(folders):
                del sys.modules[name]
        left = state.leftovers(self.start_state)   # first: the restore refills the containers it counts
        failed = state.restore(self.start_state, deep=True)
        _empty_folder(self.start_state.values.get("working directory", "."))
        return {"left": failed + left}

    def error_record(self, exc: BaseException, op: str | None, module: str | None) -> dict:
        rec = {
            "kind": "exception",
            "type": type(exc).__name__,
            "message": _text(exc),
            "trace": self.student_frames(exc),
        }
        if isinstance(exc, NotImplementedError):
            rec["kind"] = "not_implemented"
        elif isinstance(exc, SystemExit):
            rec["kind"] = "system_exit"
            rec["message"] = f"the code called sys.exit({_text(exc.code)})"
        elif isinstance(exc, SyntaxError):
            rec.update(kind="syntax_error", filename=os.path.basename(str(exc.filename or "")),
                       lineno=exc.lineno, offset=exc.offset, text=(exc.text or "").rstrip()[:200],
                       message=_text(exc.msg))
        elif isinstance(exc, ModuleNotFoundError) and op == "import" and exc.name and \
                not os.path.exists(os.path.join(self.submission, exc.name.split(".")[0] + ".py")) and \
                _is_plain_name(exc.name):
            rec.update(kind="missing_file", missing=exc.name, importer=module)
        elif isinstance(exc, wire.EncodeError):
            rec["kind"] = "encode_error"
        elif op == "import":
            rec["kind"] = "import_error"
        return rec

    def student_frames(self, exc: BaseException) -> list:
        return frames.student_frames(exc, self.submission)


def callable_names(obj) -> list[str]:
    """Names the parent may call in one round trip (``callmethod``): for a module, its callable
    attributes now (functions, classes); else the callable attributes of its class (methods).
    Only a hint: the child looks the name up again at the call, and for any other use the
    parent asks for the attribute itself. At most ``MAX_LIST`` names, no dunders."""
    try:
        if isinstance(obj, types.ModuleType):
            pairs = list(vars(obj).items())
        else:
            kind = type(obj)
            pairs = [(name, inspect.getattr_static(kind, name, None)) for name in dir(kind)]
        return [name for name, value in pairs[:MAX_LIST]
                if isinstance(name, str) and not name.startswith("__") and callable(value)][:MAX_LIST]
    except Exception:  # a hostile __dir__ or __dict__: no hint, plain getattr
        return []


def _empty_folder(folder: str) -> None:
    """Remove what ``folder`` holds (best effort: what cannot be removed stays)."""
    import shutil

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _is_plain_name(name: str) -> bool:
    return name.isidentifier() and name not in sys.builtin_module_names


def _module_name(name) -> str:
    if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")):
        raise ValueError(f"bad module name {name!r}")
    return name


def _text(obj) -> str:
    try:
        text = str(obj)
    except BaseException:  # a student exception whose __str__ fails
        text = "<unprintable>"
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " ...[truncated]"


def main(argv: list[str]) -> None:
    """Entry point: ``main([in_fd, out_fd, submission_dir, limits_json])``."""
    in_fd, out_fd = int(argv[0]), int(argv[1])
    submission = argv[2]
    apply_limits(json.loads(argv[3]))
    import_trusted()
    limits = json.loads(argv[3])
    info = cap_memory(limits.get("memory_bytes", 0))
    if sys.platform.startswith("linux"):
        from . import syscalls

        info.update(syscalls.install(limits.get("syscall_filter", True)))
    serve(in_fd, out_fd, submission, {"sandbox": info})


def serve(in_fd: int, out_fd: int, submission: str, info: dict | None = None) -> None:
    """Answer requests on ``in_fd``/``out_fd`` until ``exit`` or EOF; never returns.

    torch and safetensors must already be imported and the limits applied (:func:`main`
    does both; the zygote did them before forking). ``info`` is added to ``hello``'s reply.
    """
    sys.path[:] = [p for p in sys.path if p and "_tkit_runtime" not in p]
    sys.path.insert(0, submission)
    sys.dont_write_bytecode = True
    forbidden.install(submission)   # the folder whose uses count (the wrappers are in place since import_trusted)
    inbox = bytearray()
    from . import components

    components.connect(in_fd, out_fd, inbox)   # a served component's callbacks use the same pipes
    server = Server(submission, info)          # after: the connection is part of the state put back
    while True:
        try:
            req, tensors = wire.read_message(in_fd, inbox)
        except EOFError:
            os._exit(0)
        if req.get("op") == "exit":
            os._exit(0)
        enc = wire.Encoder(server.make_ref)
        try:
            result = server.handle(req, tensors)
            reply = {"id": req.get("id"), "ok": True, "value": enc.encode(result)}
        except BaseException as exc:  # student code may raise anything, SystemExit included
            enc = wire.Encoder(server.make_ref)
            reply = {"id": req.get("id"), "ok": False,
                     "error": server.error_record(exc, req.get("op"), req.get("module"))}
        used = forbidden.take()
        if used:   # the contract's forbidden functions this request's student code reached
            reply["forbidden"] = used
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        try:
            message = wire.pack(reply, enc.tensors)
        except BaseException as exc:
            message = wire.pack({"id": req.get("id"), "ok": False,
                                 "error": {"kind": "encode_error", "type": type(exc).__name__,
                                           "message": _text(exc), "trace": []}})
        wire.write_all(out_fd, message)
