"""What a class run keeps: the gradebook and each submission's files.

- :mod:`.gradebook`: the SQLite gradebook (a row per submission and per test; ``--resume``);
- :mod:`.class_run`: ``tkit grade``'s records: results.json, feedback, grades.csv, summary.html.

In: each submission's :class:`~autograder.results.model.Results`. Out: files in ``OUT/``.
"""
