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
    # left out: 4 wrong-value messages beyond MAX_DETAILS and 34 of the 40 TODO lines
    assert lines[-1] == ("1 of 53 tests passed, 40 not implemented yet, 12 failed. "
                         "Run `tkit check -v` to see every message (38 not shown).")
    assert "total" in lines[-3] and "1/53" in lines[-3]       # the table's total row, then its border
    assert sum("wrong values" in line for line in lines) == console.MAX_DETAILS
    # the untouched TODOs: one cause line with its count, then its first messages, after the failures
    # with values (a named mistake is never below a wall of TODOs)
    at = lines.index("✗ a TODO is not implemented yet (tests affected: 40; masks)")
    assert at > max(i for i, line in enumerate(lines) if "wrong values" in line)
    assert [line.strip() for line in lines[at + 1:at + 1 + console.MAX_CAUSE_LINES]] == \
        [f"not implemented {i}" for i in range(console.MAX_CAUSE_LINES)]
    assert sum("not implemented" in line for line in lines[:-1]) == 1 + console.MAX_CAUSE_LINES
    verbose = printed(res, verbose=True)
    assert verbose[-1] == "1 of 53 tests passed, 40 not implemented yet, 12 failed."
    assert sum("not implemented" in line for line in verbose[:-1]) == 40


def test_the_summary_line_names_the_call_that_shows_every_message_where_the_check_runs():
    """In a notebook the way to every message is ``verbose=True``, not ``tkit check -v``."""
    from autograder.notebook.report import CheckReport
    from autograder.results.model import as_results

    wrong = [record("attention", f"w{i}", "failed", output=f"wrong values {i}") for i in range(12)]
    res = results(wrong)
    assert printed(res)[-1].endswith("Run `tkit check -v` to see every message (4 not shown).")
    text = " ".join(CheckReport("attention", results=as_results(res)).text().split())   # lines wrap at 100
    assert text.endswith('Run `tkit.check("attention", verbose=True)` to see every message (4 not shown).')
    assert "tkit check -v" not in text
    ko = " ".join(CheckReport("attention", results=as_results(res), lang="ko").text().split())
    assert 'tkit.check("attention", verbose=True)' in ko and "tkit check -v" not in ko
    assert "Run `" not in CheckReport("attention", results=as_results(res), verbose=True).text()


def test_a_named_mistake_s_hint_is_printed_once():
    hint = "Likely mistake: the scores are not divided by sqrt(d_k) [attention_no_scaling]"
    wrong = [record("attention", f"w{i}", "failed", output=f"wrong values {i}\n{hint}", mistake="attention_no_scaling")
             for i in range(3)]
    lines = printed(results(wrong + [record("attention", "ok")]))
    assert sum(hint in line for line in lines) == 1
    assert lines[0] == f"✗ {hint} (tests affected: 3; attention)"       # first, with the tests it affects
    assert sum("[attention_no_scaling] (as above)" in line for line in lines) == 3
    assert all(f"wrong values {i}" in "\n".join(lines) for i in range(3))
