"""``tkit check``'s terminal output (:mod:`autograder.reports.console`), on small hand-made results
dicts (no grading run)."""

from rich.console import Console

from autograder.reports import console
from results_dicts import record, results


def printed(res, **kwargs) -> list[str]:
    out = Console(record=True, width=120, color_system=None)
    with out.capture() as cap:
        console.print_results(res, out, **kwargs)
    return cap.get().splitlines()


def test_check_output_ends_with_the_total_and_a_summary_line():
    todo = [record("masks", f"t{i}", "failed", output=f"not implemented {i}", failure="not_implemented")
            for i in range(40)]
    wrong = [record("attention", f"w{i}", "failed", output=f"wrong values {i}") for i in range(12)]
    res = results(todo + wrong + [record("attention", "ok")])
    lines = printed(res)
    assert lines[-1] == ("1 of 53 tests passed, 40 not implemented yet, 12 failed. "
                         "Run `tkit check -v` to see every message (44 not shown).")
    assert "total" in lines[-3] and "1/53" in lines[-3]       # the table's total row, then its border
    assert sum("wrong values" in line for line in lines) == console.MAX_DETAILS
    assert not any("not implemented" in line for line in lines[:-1])
    verbose = printed(res, verbose=True)
    assert verbose[-1] == "1 of 53 tests passed, 40 not implemented yet, 12 failed."
    assert sum("not implemented" in line for line in verbose[:-1]) == 40
