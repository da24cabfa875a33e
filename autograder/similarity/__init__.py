"""Code similarity across a class (``tkit similarity``).

- :mod:`.matcher`: which submissions share code beyond the starter stubs (copydetect);
- :mod:`.behaviour`: which share rare wrong outputs (the gradebook's signatures);
- :mod:`.report`: ``similarity.csv``, ``similarity-behaviour.csv`` and ``similarity.html``.

In: a class's submissions, read through :mod:`autograder.intake`, and a graded class's
gradebook. Out: the scored pairs per exercise and the three files in ``OUT/``. Nothing is
graded and no student code runs.
"""
