"""Code similarity across a class (``tkit similarity``).

- :mod:`.matcher`: which submissions share code beyond the starter stubs (copydetect);
- :mod:`.report`: ``similarity.csv`` and ``similarity.html``.
"""
