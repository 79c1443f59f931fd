"""Documentation stays in step with the code, and README's commands with CI."""

import ast
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from skfairverify.rules._steps import steps_table

ROOT = Path(__file__).resolve().parents[1]


def _gen_api():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_in_step_with_docstrings():
    expected = _gen_api().render()
    on_disk = {"api.md", *(f"api/{p.name}" for p in (ROOT / "docs" / "api").glob("*.md"))}
    assert on_disk == set(expected), "the API pages are stale: run `python docs/gen_api.py`"
    for rel, text in expected.items():
        actual = (ROOT / "docs" / rel).read_text(encoding="utf-8")
        assert actual == text, f"docs/{rel} is stale: run `python docs/gen_api.py`"


def test_api_reference_has_one_page_and_anchor_per_public_name():
    pages = _gen_api().render()
    names = [f"{module}.{name}" for module, name, _ in _gen_api().public_objects()]
    assert len(names) == len(set(names)) and len(pages) == len(names) + 1
    index = pages["api.md"]
    for name in names:
        # the index links the page, whose one mkdocstrings block renders the name as
        # the page's heading, anchored by its full path
        assert f"](api/{name}.md)" in index
        assert pages[f"api/{name}.md"].startswith(f"::: {name}\n")
    assert ":class:" not in index and ":func:" not in index  # roles shown as code


@pytest.mark.parametrize("module, name, obj", list(_gen_api().public_objects()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_name_has_numpydoc_examples(module, name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{module}.{name} has no docstring"
    assert re.search(r"^Examples\n-{8}", doc, re.M), f"{module}.{name} lacks an Examples section"


def _readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", setup, re.S)


def test_readme_has_two_single_line_commands_and_ci_runs_the_test_one():
    commands = _readme_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    demo, tests = commands
    assert "python -m skfairverify audit" in demo and "pip install" in demo
    assert "pytest" in tests and "pip install" in tests
    ci_lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    assert tests in ci_lines, ".ci/run must run README's test command verbatim"


def test_mkdocs_navigation_points_to_existing_pages():
    nav = re.findall(r":\s*(\S+\.md)", (ROOT / "mkdocs.yml").read_text())
    assert nav and all((ROOT / "docs" / page).is_file() for page in nav)
    for page in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([\w.-]+\.md)\)", page.read_text(encoding="utf-8")):
            assert (ROOT / "docs" / link).is_file(), f"{page.name} links to missing {link}"


# Names retired by issue 15 (one vocabulary, one result shape); docs/api.md is generated
# from the docstrings and checked above, so it is not read here.
_RETIRED = {
    r"\bsensitive_feature\b": "sensitive_features",
    r"\bsensitive_test\b": "sensitive_features (values aligned with X_test)",
    r"--sensitive(?![-\w])": "--sensitive-features",
    r"\bsensitive=": "sensitive_features=",
    r"\.attrs\b": "the fields of the result object",
    r"\[\"(?:cflips|ndccf|n_refused|per_k|sensitive_classifier)\"\]": "CounterfactualResult "
                                                                     "attributes",
    r"\bgroup_metric\b": "metric_by_group",
    r"\b(?:ESLScorer|CounterfactualScorer|FairnessScorer)\b": "make_*_scorer",
    r"\bfavour": "favor (American spelling)",
}


def _prose_and_examples():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "examples").glob("*.py"))]
    return [p for p in pages if p.name != "api.md"]


@pytest.mark.parametrize("path", _prose_and_examples(), ids=lambda p: p.name)
def test_docs_and_examples_use_only_the_new_names(path):
    text = path.read_text(encoding="utf-8")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r} -> {new}"
             for pattern, new in _RETIRED.items() for m in re.finditer(pattern, text)]
    assert not found, f"{path.name} uses retired names:\n" + "\n".join(found)


def test_pipeline_steps_table_is_in_step_with_the_readers():
    text = (ROOT / "docs" / "any-classifier.md").read_text(encoding="utf-8")
    assert steps_table() in text, "docs/any-classifier.md: paste rules._steps.steps_table()"


#: Longest class docstring, in lines: what a user needs (numpydoc, an example, the
#: definition with its paper section); measured figures and long explanations live in
#: docs/ (issue 24).
MAX_CLASS_DOCSTRING_LINES = 150


def _public_classes():
    """(module path, class name, docstring) of every public class of the package."""
    out = []
    for path in sorted((ROOT / "skfairverify").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out.append((path.relative_to(ROOT).as_posix(), node.name,
                            ast.get_docstring(node, clean=False) or ""))
    return out


def test_no_class_docstring_is_longer_than_150_lines():
    classes = _public_classes()
    assert any(name == "FairnessVerifier" for _, name, _ in classes)
    long = {f"{path}::{name}": len(doc.splitlines()) for path, name, doc in classes
            if len(doc.splitlines()) > MAX_CLASS_DOCSTRING_LINES}
    assert not long, f"class docstrings over {MAX_CLASS_DOCSTRING_LINES} lines: {long}"
