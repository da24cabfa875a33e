"""Transparent huge pages for the zygote's memory, so that forking a child is cheap.

A fork copies the page tables of the parent's anonymous memory and takes a reference on every
page, and the child's exit gives them back: with torch imported (~290 MB anonymous, mostly the
C heap and a few large mappings) that is ~20 ms of CPU per fork and exit, three times per
sandboxed child (supervisor, init, worker). Backed by 2 MB pages the same memory is a few
hundred page-table entries: :func:`collapse` asks the kernel (``madvise(MADV_HUGEPAGE)``, then
``MADV_COLLAPSE``, Linux 6.1+) to do that for the large anonymous regions, a piece at a time.
A copy-on-write fault in a child still copies 4 KB (the kernel splits the huge mapping first).

Standard library only (this package is copied into the sandbox).
"""

from __future__ import annotations

import ctypes
import os

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE = 2 << 20
MIN_REGION = 8 << 20   # regions smaller than this are left alone
STEP = 8 << 20          # bytes collapsed per call of :func:`collapse_step` (~30 ms)


_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return _LIBC


def regions() -> list[tuple[int, int]]:
    """The 2 MB-aligned spans of this process's large private anonymous regions (the heap and
    unnamed mappings), as ``(start, end)``; empty where ``/proc/self/maps`` cannot be read."""
    spans = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split()
                if parts[1] != "rw-p" or (len(parts) > 5 and parts[5] != "[heap]"):
                    continue
                start, end = (int(x, 16) for x in parts[0].split("-"))
                lo, hi = (start + HUGE - 1) & ~(HUGE - 1), end & ~(HUGE - 1)
                if hi - lo >= MIN_REGION:
                    spans.append((lo, hi))
    except OSError:
        return []
    return spans


def chunks(spans: list[tuple[int, int]], step: int = STEP):
    """``(start, length)`` pieces of at most ``step`` bytes covering ``spans``."""
    for lo, hi in spans:
        for start in range(lo, hi, step):
            yield start, min(step, hi - start)


def collapse_step(pieces) -> bool:
    """Collapse the next piece of ``pieces`` (an iterator of :func:`chunks`); False when done.
    A refusal (no THP, an old kernel, no contiguous memory) is ignored: the memory just stays
    in small pages."""
    libc = _libc()
    piece = next(pieces, None)
    if piece is None:
        return False
    start, length = piece
    if libc.madvise(start, length, MADV_HUGEPAGE) == 0:
        libc.madvise(start, length, MADV_COLLAPSE)
    return True


def collapse() -> int:
    """Collapse every large anonymous region now; returns the bytes asked for."""
    spans = regions()
    pieces = chunks(spans)
    while collapse_step(pieces):
        pass
    return sum(hi - lo for lo, hi in spans)


def available() -> bool:
    """Whether the kernel offers transparent huge pages on request (``madvise`` or ``always``)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return False
    return "[never]" not in text and os.uname().sysname == "Linux"
