"""Attack (with positional_encoding.py): print every call recorded so far, then fail."""
import positional_encoding


def _leak(*args, **kwargs):
    print("recorded calls:", "; ".join(positional_encoding.CALLS))
    raise RuntimeError("see the calls above")


rope_angles = _leak
apply_rope = _leak
