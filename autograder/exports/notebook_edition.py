"""The notebook edition: one Jupyter notebook per exercise (``tkit release --notebooks``).

Each ``notebooks/<exercise>.ipynb`` of the student edition is made from the exercise's stub
(``exercises/<exercise>.py``, itself generated from ``solutions/``) and the exercise contract
(``exercises/README.md``), so no explanation is written twice:

1. a markdown cell: the title in English and Korean, the stub's module docstring (its
   ``English`` and ``한국어`` parts: what the piece does, the formula and its source), the
   exercise's section of the contract (names, signatures, shapes) and how to work in the notebook;
2. a set-up cell (tagged :data:`~autograder.intake.notebooks.CHECK_TAG`):
   ``import autograder.notebook as tkit``, which also lets ``from masks import ...`` find the
   student's other notebooks in the same folder (:mod:`autograder.notebook`);
3. the stub's code, one code cell per top-level block, TODOs and ``NotImplementedError`` kept;
4. the self-check cell (tagged as well): ``tkit.check("<exercise>")``.

The tagged cells are not graded (:mod:`autograder.intake.notebooks` leaves them out), so a
submitted notebook is graded on exactly its exercise cells. The edition is scanned for reference
material like the ``.py`` edition, cell sources included
(:func:`autograder.exports.release.reference_material`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from autograder import exercises
from autograder.intake.notebooks import CHECK_MODULE, CHECK_TAG

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
FOLDER = "notebooks"   # in the edition: notebooks/<exercise>.ipynb


def _markdown(text: str) -> str:
    """reStructuredText bits of a docstring as markdown: ``code`` -> `code`, section rules dropped."""
    text = text.replace("``", "`")
    return re.sub(r"^(-{3,}|={3,})\n", "", text, flags=re.M)


def docstring_parts(stub_source: str) -> tuple[str, str, str]:
    """``(title line, English part, Korean part)`` of a stub's module docstring."""
    doc = ast.get_docstring(ast.parse(stub_source)) or ""
    title, _sep, rest = doc.partition("\n")
    english, korean = rest, ""
    match = re.search(r"^한국어\n-+\n", rest, flags=re.M)
    if match:
        english, korean = rest[: match.start()], rest[match.end():]
    english = re.sub(r"^\s*English\n-+\n", "", english.strip("\n") + "\n", flags=re.M)
    return title.strip(), english.strip(), korean.strip()


def contract_section(name: str, contract: str) -> str:
    """The exercise's section of ``exercises/README.md`` (without its heading), or ''."""
    match = re.search(rf"^## \d+\. `{re.escape(name)}\.py`[^\n]*\n(.*?)(?=^## |\Z)", contract, flags=re.M | re.S)
    return match.group(1).strip() if match else ""


def code_blocks(stub_source: str) -> list[str]:
    """The stub's code without its generated first line and module docstring, cut into cells at
    each top-level definition (the comments just above a definition go with it)."""
    tree = ast.parse(stub_source)
    lines = stub_source.split("\n")
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        start = body[0].end_lineno
        body = body[1:]
    else:
        start = 0
    cuts = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            while first - 1 >= start and lines[first - 1].lstrip().startswith("#"):
                first -= 1
            cuts.append(first)
    blocks, previous = [], start
    for cut in cuts + [len(lines)]:
        block = "\n".join(lines[previous:cut]).strip("\n")
        if block.strip():
            blocks.append(block)
        previous = max(previous, cut)
    return blocks


def _how_to(name: str) -> str:
    return (
        "### How to work (사용법)\n\n"
        "Fill in each `# TODO` (replace the `raise NotImplementedError(...)` under it), run the cells, "
        "**save the notebook**, then run the self-check cell at the end. It runs the public tests on "
        "the code of this notebook's exercise cells, in the kit's sandbox, as `tkit check` does; "
        "`tkit.check(..., lang=\"ko\")` answers in Korean. Hand in this notebook as it is "
        f"(`{name}.ipynb`): the set-up and self-check cells are not graded.\n\n"
        "`# 할 일` 마다 그 아래의 `raise NotImplementedError(...)` 를 여러분의 코드로 바꾸고, 셀을 실행한 뒤 "
        "**노트북을 저장**하고 마지막의 자가 점검 셀을 실행하세요. `tkit check` 처럼 샌드박스에서 이 노트북의 "
        "과제 셀 코드에 공개 테스트를 돌립니다. `lang=\"ko\"` 를 주면 한국어로 답합니다. 제출할 때는 이 "
        f"노트북(`{name}.ipynb`)을 그대로 내면 됩니다. 설정 셀과 자가 점검 셀은 채점하지 않습니다."
    )


def exercise_notebook(name: str, stub_source: str, contract: str):
    """The edition notebook of exercise ``name`` (an ``nbformat.NotebookNode``)."""
    import nbformat.v4 as v4

    ex = exercises.get(name)
    title, english, korean = docstring_parts(stub_source)
    number = exercises.NAMES.index(name) + 1
    intro = [f"# {number}. {ex.title_en} ({ex.title_ko}): `{name}`", f"*{_markdown(title)}*",
             "## English", _markdown(english)]
    if korean:
        intro += ["## 한국어", _markdown(korean)]
    section = contract_section(name, contract)
    if section:
        intro += ["## The contract: names and shapes (약속: 이름과 모양)",
                  "From `exercises/README.md` (the source of truth; 기준 문서):", section]
    if ex.depends:
        intro += ["### Components (구성 요소)",
                  "This exercise imports your own " + ", ".join(f"`{d}`" for d in ex.depends)
                  + ": keep those notebooks (or `.py` files) in this folder. 이 과제는 같은 폴더의 "
                  + ", ".join(f"`{d}`" for d in ex.depends) + " 노트북(또는 `.py`)을 import 합니다."]
    intro.append(_how_to(name))
    tagged = {"tags": [CHECK_TAG]}
    cells = [v4.new_markdown_cell("\n\n".join(intro)),
             v4.new_code_cell(f"# Set-up, not graded (설정, 채점하지 않음): the self-check, and imports of your "
                              f"other notebooks in this folder.\nimport {CHECK_MODULE} as tkit",
                              metadata=dict(tagged))]
    cells += [v4.new_code_cell(block) for block in code_blocks(stub_source)]
    cells += [v4.new_markdown_cell("## Self-check (자가 점검)\n\nSave the notebook first (먼저 저장하세요). "
                                   "`lang=\"ko\"`: in Korean (한국어로)."),
              v4.new_code_cell(f"import {CHECK_MODULE} as tkit\ntkit.check(\"{name}\")", metadata=dict(tagged))]
    for n, cell in enumerate(cells):
        cell["id"] = f"{name}-{n}"
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_notebooks(stubs_dir: Path, contract_path: Path, out_dir: Path, names=None) -> list[Path]:
    """Write ``out_dir/<exercise>.ipynb`` for each exercise (all by default); returns the paths."""
    import nbformat

    contract = Path(contract_path).read_text(encoding="utf-8") if Path(contract_path).is_file() else ""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names or exercises.NAMES:
        stub = (Path(stubs_dir) / f"{name}.py").read_text(encoding="utf-8")
        nb = exercise_notebook(name, stub, contract)
        nbformat.validate(nb)
        path = out_dir / f"{name}.ipynb"
        nbformat.write(nb, str(path))
        written.append(path)
    return written
