"""The kit in other forms: the student edition, Gradescope, nbgrader, and the stubs.

- :mod:`.stubs`: ``exercises/`` generated from ``solutions/``;
- :mod:`.release`: the student edition (``tkit release``), scanned for reference material;
- :mod:`.notebook_edition`: its notebooks (``tkit release --notebooks``);
- :mod:`.gradescope`: the Gradescope autograder zip;
- :mod:`.nbgrader`: an nbgrader course; :mod:`.nbgrader_grading`: grading its submissions.

In: the kit's sources (``solutions/``, the suites, ``templates/``), and for
:mod:`.nbgrader_grading` an nbgrader course's submitted notebooks. Out: folders and a zip for
students, Gradescope and nbgrader; points written into nbgrader's gradebook.
"""
