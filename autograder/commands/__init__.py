"""The ``tkit`` sub-commands, one module each, each exposing a click command ``command``.

Rule: a command module imports only click and light modules at its top; torch,
pytest and the grading engine are imported inside the command's function, so that
``tkit --help`` (which imports every command module) stays fast.
"""
