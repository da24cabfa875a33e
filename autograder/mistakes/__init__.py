"""Naming a student's mistake: the trusted implementations, the catalog and the search.

- :mod:`.implementations`: the reference solutions and their mutants, loaded in the parent;
- :mod:`.catalog`: the known mistakes of each exercise (instructor kit only);
- :mod:`.families`: the families of mistakes real code makes at one site (activation, scale, mask
  placement, rotary share, layout...), one table each for the catalog and the diagnosis;
- :mod:`.comparison`: a student's output against the expected one (:class:`~.comparison.Mismatch`);
- :mod:`.matching`: two catalog mistakes made together;
- :mod:`.diagnosis`: mistakes named from the public formulas alone (both editions);
- :mod:`.hybrid`: a composite's own code on the reference components: who is to blame;
- :mod:`.degenerate` and :mod:`.adversaries`: degenerate implementations, hand-written and generated
  from templates over each exercise's signatures, for ``tkit validate`` (instructor kit only).

In: a test's computation and the student's output. Out: a mismatch message and a mistake's name.
"""


def catalog_or_none():
    """The :mod:`.catalog` module, or None where it is absent (the student edition ships without it)."""
    try:
        from autograder.mistakes import catalog
    except ImportError:
        return None
    return catalog
