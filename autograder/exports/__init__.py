"""The kit in other forms: the student edition, Gradescope, nbgrader, the stubs, LMS import files.

- :mod:`.stubs`: ``exercises/`` generated from ``solutions/``;
- :mod:`.release`: the student edition (``tkit release``), scanned for reference material;
- :mod:`.notebook_edition`: its notebooks (``tkit release --notebooks``);
- :mod:`.gradescope`: the Gradescope autograder zip;
- :mod:`.nbgrader`: an nbgrader course; :mod:`.nbgrader_grading`: grading its submissions;
- :mod:`.lms`: a gradebook as Canvas, Moodle or LTI 1.3 (AGS) imports it, for a roster.

In: the kit's sources (``solutions/``, the suites, ``templates/``), for
:mod:`.nbgrader_grading` an nbgrader course's submitted notebooks, for :mod:`.lms` a class
gradebook and a roster. Out: folders and a zip for students, Gradescope and nbgrader; points
written into nbgrader's gradebook; an LMS's import file.
"""
