"""Attack: write more shared anonymous memory (``mmap(MAP_SHARED)``) than the child's memory
cap allows. ``RLIMIT_DATA`` does not count such mappings, so under a data limit alone this
succeeds (and N workers doing it can take the host down). Appended to the reference solution:
when the mapping is refused, the import fails and the tests with it."""
import mmap as _mmap

_SIZE = 2048 * 1024**2  # more than the 1.5 GiB cap the adversarial batch sets
_shared = _mmap.mmap(-1, _SIZE, flags=_mmap.MAP_SHARED | _mmap.MAP_ANONYMOUS)
for _offset in range(0, _SIZE, 1 << 20):
    _shared[_offset] = 1  # touch every MiB: real memory, not just address space
print(f"wrote {_SIZE >> 20} MB of shared memory", flush=True)
