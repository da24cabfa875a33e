"""Handles to objects living in a submission's child: :class:`RemoteObject` and :class:`RemoteMethod`.

What :class:`autograder.sandbox.remote.RemoteImpl` hands to tests: attribute access and calls on a handle
become requests to the child (``impl._request``); nothing of the child's objects lives here.
"""

from __future__ import annotations

from autograder.child import wire
from autograder.child.wire import EncodeError


class RemoteObject:
    """A handle to an object living in the child (a module, a class, an nn.Module...).

    Attribute access and calls are forwarded; dunder lookups are not (so Python's own
    protocols never run student code implicitly). ``tkit_type`` is the qualified class
    name the child reported, ``tkit_mro`` its base classes: informative only.
    """

    __slots__ = ("_impl", "_id", "_gen", "tkit_type", "tkit_mro", "tkit_label", "tkit_ck")

    def __init__(self, impl, record: dict, gen: int, label: str):
        object.__setattr__(self, "_impl", impl)
        object.__setattr__(self, "_id", record["id"])
        object.__setattr__(self, "_gen", gen)
        object.__setattr__(self, "tkit_type", str(record.get("type", "?")))
        mro = record.get("mro")
        object.__setattr__(self, "tkit_mro", [str(m) for m in mro[:12]] if isinstance(mro, list) else [])
        object.__setattr__(self, "tkit_label", label)
        object.__setattr__(self, "tkit_ck", str(record.get("ck", "")))  # key of its callable names

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name in self._impl._callables(self):  # a method (or a module's function): see RemoteMethod
            return RemoteMethod(self, name)
        return self._impl._request("getattr", self, f"{self.tkit_label}.{name}", ref=self._id, name=name)

    def __setattr__(self, name, value):
        raise AttributeError("remote objects are read-only in the parent")

    def __call__(self, *args, **kwargs):
        return self._impl._request("call", self, f"{self.tkit_label}(...)", args=args, kwargs=kwargs,
                                   ref=self._id)

    def __iter__(self):
        return iter(self._impl._request("list", self, f"list({self.tkit_label})", ref=self._id))

    def __repr__(self) -> str:
        return f"<remote {self.tkit_type} {self.tkit_label}>"

    def isinstance_of(self, qualname: str) -> bool:
        """Whether the child said this object's class derives from ``qualname``
        (e.g. ``torch.nn.modules.linear.Linear``)."""
        return qualname in self.tkit_mro


class RemoteMethod:
    """``obj.name`` where the child said ``name`` is callable on ``obj``'s class (or module):
    calling it is one ``callmethod`` round trip instead of ``getattr`` then ``call``; the child
    looks ``name`` up at the call, so the result is the same. Any other use fetches the
    attribute itself (:meth:`resolve`) and goes on with that :class:`RemoteObject`."""

    __slots__ = ("_owner", "_name", "_resolved")

    def __init__(self, owner: RemoteObject, name: str):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_resolved", None)

    def __call__(self, *args, **kwargs):
        owner = self._owner
        return owner._impl._request("callmethod", owner, f"{owner.tkit_label}.{self._name}(...)", args=args,
                                    kwargs=kwargs, ref=owner._id, name=self._name)

    def resolve(self):
        """The attribute itself (a ``getattr`` round trip, once)."""
        if self._resolved is None:
            owner = self._owner
            object.__setattr__(self, "_resolved", owner._impl._request(
                "getattr", owner, f"{owner.tkit_label}.{self._name}", ref=owner._id, name=self._name))
        return self._resolved

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)

    def __setattr__(self, name, value):
        raise AttributeError("remote objects are read-only in the parent")

    def __iter__(self):
        return iter(self.resolve())

    def __repr__(self) -> str:
        return repr(self.resolve())


class HandleBook:
    """The handle bookkeeping of :class:`autograder.sandbox.remote.RemoteImpl` (a mixin): handles
    made from the child's ref records, the callable names and types the first record of each class
    gives, and refs sent back to the child. Uses the owner's ``_gen``, ``_calls`` and ``_types``."""

    @staticmethod
    def _label_for(rec: dict, what: str) -> str:
        if what.endswith(".py"):
            return what[:-3]
        return what

    def _callables(self, obj: RemoteObject) -> frozenset:
        """The names the child listed as callable for ``obj``'s class or module (this child)."""
        return self._calls.get(obj.tkit_ck, frozenset()) if obj._gen == self._gen else frozenset()

    def _make_remote(self, rec: dict, gen: int, what: str) -> RemoteObject:
        """A handle for a ref record; what the first record of a class gives (``calls``, ``type``,
        ``mro``: sent once per class and child) is kept by its key ``ck`` and filled in for later ones."""
        ck = str(rec.get("ck"))
        if gen == self._gen:
            calls = rec.get("calls")
            if isinstance(calls, list):
                self._calls[ck] = frozenset(n for n in calls[:wire.MAX_ITEMS] if isinstance(n, str))
            if "type" in rec:
                self._types[ck] = (rec.get("type"), rec.get("mro"))
            elif ck in self._types:
                rec["type"], rec["mro"] = self._types[ck]
        return RemoteObject(self, rec, gen, self._label_for(rec, what))

    def _encode_ref(self, value) -> dict:
        if isinstance(value, RemoteMethod):
            value = value.resolve()
        if isinstance(value, RemoteObject):
            if value._gen != self._gen:
                raise EncodeError("a handle from an earlier process of the submission")
            return {"t": "ref", "id": value._id}
        raise EncodeError(f"the parent cannot send a {type(value).__name__} to the child")
