"""Attack: a torch.py beside the submission that fakes torch (allclose always True, ...)."""
import sys

sys.modules.pop("torch", None)
allclose = equal = lambda *a, **k: True


class Tensor:
    def __eq__(self, other):
        return True
