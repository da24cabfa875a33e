"""What goes wrong in a submission's child, for the student: :class:`SubmissionError` and
:func:`submission_error` / :func:`describe_error` (the error and the sentence for a child's error record, see
:meth:`autograder.child.runner.Server.error_record`). Raised by :mod:`autograder.sandbox.remote`,
which re-exports :class:`SubmissionError`.
"""

from __future__ import annotations

from autograder.i18n import _
from autograder.sandbox import call_errors


class SubmissionError(AssertionError):
    """A failure caused by the submission. ``kind`` is one of: missing_file,
    syntax_error, import_error, not_implemented, system_exit, exception,
    encode_error, crash, timeout, protocol, time_limit, gave_up, names (parameters that match
    the exercise's neither by name nor by structure: :mod:`autograder.checks.weights`), bad_return
    (a value of another kind than the contract's: :mod:`autograder.sandbox.returns`).
    ``output`` is what the child printed during the failing call (truncated);
    ``error_type``/``error_message`` the student's exception, when one was raised; ``mistake`` the id
    of the known mistake its likely cause shows (:mod:`autograder.sandbox.call_errors`), or None,
    and ``cause`` the message's likely-cause line (replaced by the mistake's hint where it is named)."""

    def __init__(self, kind: str, message: str, output: str = "", module: str | None = None,
                 error_type: str = "", error_message: str = "", mistake: str | None = None,
                 cause: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.output = output
        self.module = module
        self.error_type = error_type          # the student's exception class name, if any
        self.error_message = error_message    # and its message
        self.mistake = mistake                # a known mistake's id the exception shows (call_errors)
        self.cause = cause                    # the message's likely-cause line, if any


def normalise(err: dict) -> dict:
    """The record with a torch dtype ``NotImplementedError`` (``"bitwise_or_cpu" not implemented for
    'Float'``) counted as an exception of the code, not as an unfinished stub."""
    if err.get("kind") == "not_implemented" and call_errors.is_torch_not_implemented(str(err.get("message", ""))):
        return {**err, "kind": "exception"}
    return err


def submission_error(err: dict, what: str, output: str = "", module: str | None = None) -> SubmissionError:
    """The :class:`SubmissionError` of a child error record (see runner.error_record): its kind, the
    sentence of :func:`describe_error`, and the likely cause and known mistake of an exception
    (:func:`autograder.sandbox.call_errors.explain`, worked out once for both)."""
    err = normalise(err)
    explained = _explained(err)
    return SubmissionError(str(err.get("kind", "exception")), _sentence(err, what, explained), output, module=module,
                           error_type=str(err.get("type", "")), error_message=str(err.get("message", "")),
                           mistake=explained[2], cause=explained[1])


def describe_error(err: dict, what: str) -> str:
    """A student-facing sentence for a child error record (see runner.error_record)."""
    err = normalise(err)
    return _sentence(err, what, _explained(err))


def _explained(err: dict) -> tuple[str, str, str | None]:
    """:func:`autograder.sandbox.call_errors.explain` of a (normalised) exception record; nothing
    for the other kinds."""
    return call_errors.explain(err) if err.get("kind") == "exception" else ("", "", None)


def _sentence(err: dict, what: str, explained: tuple[str, str, str | None]) -> str:
    kind = err.get("kind")
    message = str(err.get("message", ""))
    if kind == "missing_file":
        text = _("expected {file} in the submission").format(file=f"{err.get('missing')}.py")
        importer = err.get("importer")
        if importer and importer != err.get("missing"):
            text += " " + _("(imported by {file})").format(file=f"{importer}.py")
        return text
    if kind == "syntax_error":
        text = _("syntax error in {file}, line {line}: {message}").format(
            file=err.get("filename"), line=err.get("lineno"), message=message)
        if err.get("text"):
            text += f"\n    {err['text']}"
        return text
    if kind == "not_implemented":
        from autograder.exercises import STUB_NOT_IMPLEMENTED

        if message.endswith(STUB_NOT_IMPLEMENTED):   # the stub's own bilingual sentence: say it once
            message = message[: -len(STUB_NOT_IMPLEMENTED)].rstrip()
        return _("not implemented yet: {message}").format(message=message or what)
    if kind == "system_exit":
        return _("{message} while running {what}; a submission must not exit the process").format(
            message=message, what=what)
    if kind == "encode_error":
        return _("{what} returned a value the grader cannot receive: {message}").format(
            what=what, message=message)
    if kind == "import_error":
        head = _("importing {what} failed: {error}").format(what=what, error=f"{err.get('type')}: {message}")
    else:
        head = _("{what} raised {error}").format(what=what, error=f"{err.get('type')}: {message}")
    frames = err.get("trace") if isinstance(err.get("trace"), list) else []
    frames = [f for f in frames if isinstance(f, dict)]
    if frames:
        head += "\n" + "\n".join(
            f"  {f.get('file')}, line {f.get('line')}, in {f.get('func')}: {f.get('code')}" for f in frames)
    head += "".join("\n" + line for line in explained[:2] if line)
    return head


def error_cause(err: dict) -> tuple[str, str | None]:
    """The likely-cause line of an exception record and the known mistake it shows
    (:func:`autograder.sandbox.call_errors.explain`); ``("", None)`` for other records."""
    _where, line, mistake = _explained(normalise(err))
    return line, mistake
