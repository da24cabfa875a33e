"""One submission's results, the one shape every later stage reads.

- :mod:`.model`: :class:`~.model.Results` and :class:`~.model.TestResult`, written once as
  Gradescope's results.json;
- :mod:`.not_graded`: tests the grader could not judge ("not graded", never the student's failure);
- :mod:`.grader_errors`: grader errors, detailed for the instructor, a short note for the student.
"""
