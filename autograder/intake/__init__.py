"""Student material coming in: submissions, notebooks, size limits, student-chosen text.

- :mod:`.submission`: a folder, a .zip or notebooks made into a folder of modules, bounded;
- :mod:`.layout`: which files of a hand-in are the modules (near-miss names, nested folders) and
  its content hash;
- :mod:`.notebooks`: ``<exercise>.ipynb`` -> the module ``<exercise>.py``;
- :mod:`.limits`: the size limits on student material, in one place;
- :mod:`.untrusted`: student ids and text as data (folder names, reports, CSV, terminals);
- :mod:`.textfiles`: text that leaves the kit, escaped, written atomically.

In: a path a student or instructor names. Out: a folder the sandbox copies, or a clear refusal.
"""
