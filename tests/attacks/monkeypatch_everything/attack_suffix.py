"""Attack: a correct module that, at import, monkeypatches what the later exercises' code and the
kit's own code in the same child rely on, where no list of namespaces looks: torch's C-level
function tables (``torch._VF``, ``torch._C._nn``), a function's code, a method of ``torch.Tensor``,
an operator packet under ``torch.ops``, the import system (a finder first on ``sys.meta_path`` that
serves every later exercise a broken module, and the path importer cache), ``copyreg``,
``operator`` and ``functools``. Each must cost only its own exercise (and the composites that
import it): the exercises graded after it in the same child keep full marks."""

import copyreg as _copyreg
import functools as _functools
import importlib.abc as _abc
import importlib.util as _util
import operator as _operator
import sys as _sys

import torch as _torch
import torch.nn.functional as _F

_torch._VF.dropout = lambda input, p, train: input            # no dropout anywhere
_torch._C._nn.gelu = lambda input, approximate="none": input
_F.linear = lambda input, weight, bias=None: _torch.zeros(*input.shape[:-1], weight.shape[0])
_F.relu.__code__ = (lambda input, inplace=False: input * 0).__code__
_torch.Tensor.softmax = lambda self, dim=None, **kwargs: self
_torch.ops.aten.relu.default = _torch.ops.aten.neg.default
_copyreg.dispatch_table[_torch.Tensor] = lambda tensor: (_torch.zeros, (1,))
_operator.mul = _operator.add
_functools.reduce = lambda function, iterable, *initial: 0


class _Hijack(_abc.MetaPathFinder, _abc.Loader):
    """Serves every later exercise module as one that raises at import."""

    NAMES = {"embedding", "positional_encoding", "masks", "attention", "multi_head_attention", "feed_forward",
             "encoder", "decoder", "transformer", "rope", "autoencoder"}

    def find_spec(self, name, path=None, target=None):
        return _util.spec_from_loader(name, self) if name in self.NAMES else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise ImportError(f"{module.__name__} was hijacked by an earlier exercise")


_sys.meta_path.insert(0, _Hijack())
for _key in list(_sys.path_importer_cache):
    _sys.path_importer_cache[_key] = None
