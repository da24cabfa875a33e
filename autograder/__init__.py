"""transformer-kit's grading engine.

The trust boundary (see docs/DESIGN.md): student code runs only in a child process
(:mod:`autograder.child`, started by :mod:`autograder.sandbox`); this package's
parent side (:mod:`autograder.sandbox.remote`, :mod:`autograder.run.plugin`) never imports it
and decodes only plain data and plain tensors from the child.
"""

__version__ = "0.1.0"
