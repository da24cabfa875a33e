"""The kit in other forms: the student edition, Gradescope, nbgrader, and the stubs.

- :mod:`.stubs`: ``exercises/`` generated from ``solutions/``;
- :mod:`.release`: the student edition (``tkit release``), scanned for reference material;
- :mod:`.gradescope`: the Gradescope autograder zip;
- :mod:`.nbgrader`: an nbgrader course; :mod:`.nbgrader_grading`: grading its submissions.
"""
