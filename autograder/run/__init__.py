"""Running the suites on one submission and on a class: the stage where tests are run and scored.

- :mod:`.grading`: one submission, prepared by :mod:`autograder.intake`, graded under pytest
  (:func:`~.grading.grade_submission`, :func:`~.grading.grade_folder`) into a
  :class:`~autograder.results.model.Results`;
- :mod:`.batch`: many submissions in worker processes (``tkit grade``);
- :mod:`.pytest_session`: the pytest arguments, and one pytest session a worker keeps for a batch;
- :mod:`.plugin`: the pytest plugin: the markers, the fixtures, and
  :class:`~.plugin.GradingSession`, one submission's run (its children, seeds, time shares,
  records and ``Results``), handed to pytest as a plugin object; :mod:`.items`: what a collected
  test says of itself (its name in reports, its markers' metadata);
- :mod:`.scoring`: pytest's reports -> the submission's ``Results``;
- :mod:`.twins`: each public test's hidden twin, made at collection;
- :mod:`.payment`: what each test pays (its twin folded in, the gated kinds by the values tests);
- :mod:`.counterexample_run`: the kit's probes, run after the hidden tests, as a hidden failure's public evidence;
- :mod:`.origin`: where an unexpected exception of a test arose (the student's values, or the kit);
- :mod:`.credit`: partial credit and plot data a passing test awards;
- :mod:`.rubric`: the tests, exercises and points the suites hold, read from their markers.

In: a submission folder and a :class:`~autograder.options.GradingOptions`, which the
``GradingSession`` carries to the plugin. Out: one ``Results`` per submission (to
:mod:`autograder.records`, the console or an export).
"""
