"""What a class run keeps: the gradebook and each submission's files.

- :mod:`.gradebook`: the SQLite gradebook (a row per submission and per test, with the
  instructor-side signature of a wrong output; ``--resume``);
- :mod:`.class_run`: ``tkit grade``'s records (:class:`~.class_run.ClassRecords`): each
  submission's ``results.json`` (written there, in ``on_result``, and nowhere else) and feedback,
  then its gradebook row, committed last; then ``grades.csv``, ``summary.html``, ``regrades.csv``;
- :mod:`.fingerprint`: the digest of what grades (suites, solutions, catalog, grading code), which
  ``--resume`` compares;
- :mod:`.regrades`: what a regrade changed, per student (old and new score, the tests that moved).

In: each submission's :class:`~autograder.results.model.Results`, as the batch hands it over.
Out: the gradebook's rows and ``Results`` objects, which the class reports read, and files in ``OUT/``.
"""
