"""One submission's results, the one shape every later stage reads.

- :mod:`.model`: :class:`~.model.Results` and :class:`~.model.TestResult`, written once as
  Gradescope's results.json;
- :mod:`.not_graded`: tests the grader could not judge ("not graded", never the student's failure);
- :mod:`.grader_errors`: grader errors, detailed for the instructor, a short note for the student.
- :mod:`.withheld`: what a student or Gradescope sees of a hidden test (fixed text, public evidence);
  the rest is the instructor's.

In: each test's record, built by :mod:`autograder.run.scoring`. Out: one ``Results`` per
submission, read by attribute by the gradebook, the reports, the console and the exports; it
stays a ``Results`` from the grading run to the gradebook.
"""
