"""An exception inside the student's code names the function that raised, its arguments' shapes and
dtypes and the likely cause, in English and Korean (:mod:`autograder.sandbox.call_errors`); a cause
that is a known mistake names that mistake on the test (``extra_data["mistake"]``)."""

import shutil
from pathlib import Path

import pytest
import torch

from autograder import paths
from autograder.child import frames
from autograder.i18n import using
from autograder.mistakes import catalog, diagnosis
from autograder.reports import render
from autograder.results.model import TestResult
from autograder.sandbox import call_errors
from autograder.sandbox.errors import describe_error, error_cause
from grading_runs import run_suites

REAL_WORLD = Path(__file__).resolve().parent / "data" / "real_world"


def record(message, func="combine_masks", args=(), kind="RuntimeError"):
    return {"kind": "exception", "type": kind, "message": message,
            "trace": [{"file": "masks.py", "line": 3, "func": func, "code": "return a | k", "args": list(args)}]}


BOOL_3_4 = ["attn_mask", {"t": "tensor", "dtype": "bool", "shape": [3, 4]}]
BOOL_2_4 = ["key_padding_mask", {"t": "tensor", "dtype": "bool", "shape": [2, 4]}]
BROADCAST = "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"


# --- the child's side: frames and argument records ---------------------------------------------

def test_frames_describe_the_innermost_student_frame_without_values(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "masks.py").write_text(
        "def combine_masks(attn_mask, key_padding_mask, scale=4, label='x'):\n"
        "    return attn_mask | key_padding_mask\n", encoding="utf-8")
    namespace = {}
    exec(compile((folder / "masks.py").read_text(), str(folder / "masks.py"), "exec"), namespace)
    secret = torch.tensor([[True, False, True, False]] * 3)
    try:
        namespace["combine_masks"](secret, torch.zeros(2, 4, dtype=torch.bool))
    except RuntimeError as exc:
        got = frames.student_frames(exc, str(folder.resolve()))
    assert [f["func"] for f in got] == ["combine_masks"]
    assert got[-1]["args"] == [["attn_mask", {"t": "tensor", "dtype": "bool", "shape": [3, 4]}],
                               ["key_padding_mask", {"t": "tensor", "dtype": "bool", "shape": [2, 4]}],
                               ["scale", {"t": "int", "v": 4}], ["label", {"t": "type", "name": "str"}]]
    assert "True" not in repr(got[-1]["args"])   # a tensor's values never travel


def test_a_hostile_argument_is_described_by_nothing():
    class Hostile:
        @property
        def __class__(self):
            raise RuntimeError("no")

    assert frames.describe_value(Hostile()) == {"t": "type", "name": "?"}
    assert frames.describe_value(10**9) == {"t": "type", "name": "int"}


# --- the parent's side: the message --------------------------------------------------------------

def test_the_message_names_the_function_its_arguments_and_the_cause_in_both_languages():
    err = record(BROADCAST, args=[BOOL_3_4, BOOL_2_4])
    with using("en"):
        text = describe_error(err, "masks.combine_masks(...)")
    assert "It was raised in combine_masks(attn_mask: bool[3, 4], key_padding_mask: bool[2, 4])." in text
    assert "Likely cause: a key_padding_mask [B, S_k] was combined" in text
    with using("ko"):
        text = describe_error(err, "masks.combine_masks(...)")
    assert "combine_masks(attn_mask: bool[3, 4], key_padding_mask: bool[2, 4]) 안에서 발생했습니다." in text
    assert "가능성이 높은 원인: key_padding_mask [B, S_k]를 헤드 축과 query 축 없이" in text
    assert error_cause(err)[1] == "mask_padding_not_expanded"


@pytest.mark.parametrize("message, func, args, kind, cause", [
    ("masked_fill_ only supports boolean masks, but got mask with dtype float", "masked_softmax",
     [["mask", {"t": "tensor", "dtype": "float32", "shape": [1, 1, 4, 4]}]], "RuntimeError", "float_mask"),
    ('"bitwise_or_cpu" not implemented for \'Float\'', "combine_masks",
     [["attn_mask", {"t": "tensor", "dtype": "float32", "shape": [4, 4]}], BOOL_2_4], "NotImplementedError",
     "float_mask"),
    ("~ (operator.invert) is only implemented on integer and Boolean-type tensors", "combine_masks",
     [["attn_mask", {"t": "tensor", "dtype": "float32", "shape": [4, 4]}]], "TypeError", "float_mask"),
    (BROADCAST, "masked_softmax", [["scores", {"t": "tensor", "dtype": "float32", "shape": [2, 3, 4]}]],
     "RuntimeError", "broadcast"),
    ("view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
     "contiguous subspaces). Use .reshape(...) instead.", "merge_heads", [], "RuntimeError", "view_not_contiguous"),
    ("shape '[2, 5, 3]' is invalid for input of size 24", "split_heads", [], "RuntimeError", "heads_not_split"),
    ("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "forward", [], "RuntimeError", "linear_input_width"),
    ("expected m1 and m2 to have the same dtype, but got: double != float", "forward", [], "RuntimeError",
     "dtype_mix"),
    ("Dimension out of range (expected to be in range of [-2, 1], but got 2)", "scaled_dot_product_attention", [],
     "IndexError", "dim_out_of_range"),
    ("Boolean value of Tensor with more than one value is ambiguous", "combine_masks", [], "RuntimeError",
     "ambiguous_bool"),
    ("index out of range in self", "forward", [], "IndexError", "index_out_of_range"),
    ("'NoneType' object has no attribute 'dim'", "masked_softmax", [], "AttributeError", "none_argument"),
])
def test_each_cause_is_recognised(message, func, args, kind, cause):
    err = record(message, func=func, args=args, kind=kind)
    assert call_errors.likely_cause(err).id == cause
    assert error_cause(err)[1] is None   # only the padding cause in combine_masks names a mistake


def test_every_cause_has_korean_text():
    for cause in call_errors.CAUSES:
        with using("en"):
            en = cause.text()
        with using("ko"):
            ko = cause.text()
        assert en != ko and any("\uac00" <= ch <= "\ud7a3" for ch in ko), cause.id


def test_a_torch_not_implemented_error_is_not_an_unfinished_stub():
    err = record('"bitwise_or_cpu" not implemented for \'Float\'', kind="NotImplementedError",
                 args=[["attn_mask", {"t": "tensor", "dtype": "float32", "shape": [4, 4]}], BOOL_2_4])
    err["kind"] = "not_implemented"   # what the child says of any NotImplementedError
    with using("en"):
        text = describe_error(err, "masks.combine_masks(...)")
    assert not text.startswith("not implemented yet")
    assert "raised NotImplementedError" in text and "Likely cause: a float mask" in text
    stub = {"kind": "not_implemented", "message": "my own TODO"}
    with using("en"):
        assert describe_error(stub, "x") == "not implemented yet: my own TODO"


def test_a_malformed_record_says_nothing_more():
    for trace in ("x", [1], [{"func": 3, "args": "no"}], [{"func": "f", "args": [["a"], [1, 2], ["b", 4]]}]):
        err = {"kind": "exception", "type": "RuntimeError", "message": BROADCAST, "trace": trace}
        with using("en"):
            describe_error(err, "f")   # never raises
        assert error_cause(err)[1] is None


def test_cause_mistakes_are_known_in_both_editions():
    for cause in call_errors.CAUSES:
        mistake = cause.mistake({"func": "combine_masks", "args": [BOOL_2_4]})
        if mistake is not None:
            assert mistake in diagnosis.KNOWN and catalog.by_id(mistake).exercise == diagnosis.KNOWN[mistake].exercise


def test_a_hidden_test_still_shows_no_output():
    test = TestResult(name="masks: hidden", score=0.0, max_score=1.0, status="failed",
                      output="masks.combine_masks(...) raised RuntimeError\nIt was raised in combine_masks(...)",
                      visibility="after_published", tags=["masks", "hidden"], mistake="mask_padding_not_expanded")
    view = render.test_view(test)
    assert view["output"] == "" and view["mistake"]["id"] == "mask_padding_not_expanded"


# --- real children, three exercises --------------------------------------------------------------

def _submission(tmp_path, files: dict[str, str]) -> Path:
    folder = tmp_path / "sub"
    shutil.copytree(paths.solutions_dir(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _failed(results, exercise):
    return [t for t in results["tests"] if t["tags"][0] == exercise and t["status"] == "failed"]


@pytest.mark.parametrize("lang, raised, cause", [
    ("en", "It was raised in combine_masks(attn_mask: bool[3, 4], key_padding_mask: bool[2, 4]).",
     "Likely mistake: combine_masks combines the key_padding_mask"),
    ("ko", "combine_masks(attn_mask: bool[3, 4], key_padding_mask: bool[2, 4]) 안에서 발생했습니다.",
     "combine_masks 가 key_padding_mask [B, S_k] 에 헤드 축과 query 축을 넣지 않고"),
])
def test_masks_exception_names_function_shapes_and_mistake(tmp_path, lang, raised, cause):
    folder = _submission(tmp_path, {"masks.py": (REAL_WORLD / "combine_unexpanded" / "masks.py").read_text()})
    results = run_suites(folder, names=["masks"], visibility=("public",), seed=5, training=False, lang=lang)
    failed = [t for t in _failed(results, "masks") if t["extra_data"]["nodeid"].endswith("test_combine_masks_shapes_and_values")]
    assert [t["extra_data"].get("mistake") for t in failed] == ["mask_padding_not_expanded"]
    output = failed[0]["output"]
    assert "RuntimeError: The size of tensor a (3) must match the size of tensor b (2)" in output
    assert raised in output and cause in output
    assert output.count("[mask_padding_not_expanded]") == 1   # the cause line became the mistake's line


def test_multi_head_attention_view_after_transpose_names_merge_heads(tmp_path):
    source = (paths.solutions_dir() / "multi_head_attention.py").read_text()
    old = "return x.transpose(1, 2).reshape(batch, seq_len, num_heads * head_dim)"
    assert source.count(old) == 1
    folder = _submission(tmp_path, {"multi_head_attention.py": source.replace(
        old, "return x.transpose(1, 2).view(batch, seq_len, num_heads * head_dim)")})
    for lang, raised, cause in (
            ("en", "It was raised in merge_heads(x: float32[", "Likely cause: view() on a tensor that is not contiguous"),
            ("ko", "merge_heads(x: float32[", "가능성이 높은 원인: 연속(contiguous)이 아닌 텐서")):
        results = run_suites(folder, names=["multi_head_attention"], visibility=("public",), seed=5, training=False,
                             lang=lang)
        outputs = [t["output"] for t in _failed(results, "multi_head_attention")]
        assert outputs and all(raised in o and cause in o for o in outputs), outputs[:1]


def test_attention_on_3d_inputs_names_the_axis_and_shapes(tmp_path):
    source = (paths.solutions_dir() / "attention.py").read_text()
    old = "torch.matmul(query, key.transpose(-2, -1))"
    assert source.count(old) == 1
    folder = _submission(tmp_path, {"attention.py": source.replace(old, "torch.matmul(query, key.transpose(2, 3))")})
    for lang, cause in (("en", "Likely cause: an axis number does not exist for this input"),
                        ("ko", "가능성이 높은 원인: 이 입력에는 없는 축 번호입니다")):
        results = run_suites(folder, names=["attention"], visibility=("public",), seed=5, training=False, lang=lang)
        outputs = [t["output"] for t in _failed(results, "attention")
                   if "scaled_dot_product_attention(query: float32[2, 3, 4], key: float32[2, 5, 4]" in t["output"]]
        assert outputs and all(cause in o and "IndexError: Dimension out of range" in o for o in outputs)
