"""Code similarity across a class (``tkit similarity``).

- :mod:`.matcher`: which submissions share code beyond the starter stubs (copydetect), and runs
  :mod:`.structural`: which compute the same thing the same way however rewritten (its graph is
  built by :mod:`.normalise` and :mod:`.expressions`);
- :mod:`.common`: the class-common rule both code matchers apply (what most of a class wrote never counts);
- :mod:`.behaviour`: which share rare wrong outputs (the gradebook's signatures);
- :mod:`.report`: ``similarity.csv``, ``similarity-structure.csv``, ``similarity-behaviour.csv`` and
  ``similarity.html``.

In: a class's submissions, read through :mod:`autograder.intake`, and a graded class's
gradebook. Out: the scored pairs per exercise and the four files in ``OUT/``. Nothing is
graded and no student code runs.
"""
