"""What a person reads: feedback, the class summary, the terminal and pictures.

- :mod:`.render`: per-student feedback (HTML, Markdown) with jinja2; :mod:`.summary`: the class's ``summary.html``;
- :mod:`.counterexamples`: a hidden failure's named mistake shown on a public test's inputs;
- :mod:`.causes`: one message per cause (failures sharing a cause shown once, with a count);
- :mod:`.roster`: the class roster table of ``summary.html``;
- :mod:`.console`: the terminal tables of ``tkit check`` (rich);
- :mod:`.pictures`: the pictures of the reports, drawn from a grading run's data.

In: :class:`~autograder.results.model.Results`. Out: text, HTML and PNG; no torch imported.
"""
