"""A stub's bilingual NotImplementedError becomes one sentence in the report's language."""

from autograder.exercises import STUB_NOT_IMPLEMENTED
from autograder.i18n import using
from autograder.sandbox.errors import describe_error


def test_the_stub_sentence_is_said_once_in_english():
    err = {"kind": "not_implemented", "message": f"attention: scaled_dot_product_attention {STUB_NOT_IMPLEMENTED}"}
    with using("en"):
        text = describe_error(err, "attention.scaled_dot_product_attention")
    assert text == "not implemented yet: attention: scaled_dot_product_attention"


def test_a_student_message_is_kept_as_written():
    err = {"kind": "not_implemented", "message": "my own TODO"}
    with using("en"):
        assert describe_error(err, "x") == "not implemented yet: my own TODO"
