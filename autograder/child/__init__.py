"""Code that runs inside the student's child process.

Only this package is copied into the sandbox (as ``_tkit_child``); it must import
nothing else of the kit: no solutions, no hidden tests, no catalog.
"""
