"""Code similarity across a class (``tkit similarity``).

- :mod:`.matcher`: which submissions share code beyond the starter stubs (copydetect);
- :mod:`.report`: ``similarity.csv`` and ``similarity.html``.

In: a class's submissions, read through :mod:`autograder.intake`. Out: the scored pairs per
exercise and the two files in ``OUT/``. Nothing is graded and no student code runs.
"""
