#!/usr/bin/env bash
# Refresh the Korean catalog after changing student-facing text (anything passed to _() or N_()
# in autograder/ and cli.py, or to _() in templates/):
#   1. extract the msgids into autograder/locale/tkit.pot,
#   2. merge them into autograder/locale/ko/LC_MESSAGES/tkit.po (new entries get an empty msgstr),
#   3. translate the empty and fuzzy entries by hand in tkit.po,
#   4. run this script again: it compiles tkit.mo (commit .pot, .po and .mo together).
# tests/test_i18n.py fails while a msgid lacks a translation or the .mo is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
PYBABEL="${PYBABEL:-pybabel}"
"$PYBABEL" extract -F autograder/locale/babel.cfg --no-location --sort-output \
    --project transformer-kit -o autograder/locale/tkit.pot .
"$PYBABEL" update -D tkit -i autograder/locale/tkit.pot -d autograder/locale -l ko \
    --no-fuzzy-matching --width 100 --ignore-pot-creation-date
"$PYBABEL" compile -D tkit -d autograder/locale -l ko --statistics
