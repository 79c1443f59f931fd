"""The package's import graph: no cycle, and the layers of docs' architecture hold.

The graph is read statically with :mod:`ast` over ``skfairverify/**/*.py``: every
``from . import``, ``from .x import``, ``from skfairverify.x import`` and ``import
skfairverify.x``, at module level, inside a function or under ``TYPE_CHECKING`` (a cycle
that only annotations close is still a cycle of the design). Importing ``a.b.c`` runs
``a/b/__init__.py`` too, so an import also reaches the packages above its target that
are not above the importing module. The layers are docs/architecture.md's table.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "skfairverify"
PACKAGE = "skfairverify"
ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"

#: The boxes by layer, bottom first (docs/architecture.md): a box imports only boxes of
#: lower layers, never one of its own layer. A box is a subpackage or a root module;
#: ``skfairverify`` is the package's ``__init__``.
LAYERS = [
    {"utils", "_optional"},
    {"datasets", "rules", "s3p"},
    {"preprocessing", "ensembles"},
    {"verification", "counterfactual", "esl"},
    {"metrics", "model_selection"},
    {"plotting"},
    {"audit"},
    {PACKAGE, "__main__"},
]
LAYER = {box: i for i, boxes in enumerate(LAYERS) for box in boxes}

# Modules allowed to import an own module inside a function: only to guard an optional
# dependency (matplotlib, dask, dice-ml) that the imported module needs when imported.
DEFERRED_IMPORTS_ALLOWED: set[str] = set()


def _module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _package_of(name: str, path: Path) -> str:
    """The package that a relative import of the module ``name`` starts from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node, name: str, path: Path, modules) -> list[str]:
    """The own-package modules one import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if node.level:
        base = _package_of(name, path).split(".")
        base = base[: len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    elif node.module and node.module.split(".")[0] == PACKAGE:
        origin = node.module
    else:
        return []
    # ``from pkg import sub`` imports the module ``pkg.sub`` when there is one
    subs = [f"{origin}.{a.name}" for a in node.names if f"{origin}.{a.name}" in modules]
    return [origin, *subs]


def _reached(target: str, importer: str, modules) -> set[str]:
    """``target`` and the packages above it whose ``__init__`` the import runs."""
    parts = target.split(".")
    above = {".".join(parts[:k]) for k in range(1, len(parts))}
    mine = importer.split(".")
    mine = {".".join(mine[:k]) for k in range(1, len(mine) + 1)}
    out = {p for p in above if p not in mine and p in modules}
    if target in modules and target != importer:
        out.add(target)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the own-package modules it imports (directly)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(node, name, path, modules):
                    edges |= _reached(target, name, modules)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_graph_reads_the_package():
    graph = import_graph()
    assert "skfairverify.rules" in graph[PACKAGE]  # a package's __init__
    assert "skfairverify.rules" in graph["skfairverify.preprocessing._integer_weights"]
    # an import inside a function counts
    assert "skfairverify.verification" in graph["skfairverify.metrics._verifier_scorer"]
    # ``from ..utils._html import f`` runs utils/__init__.py too
    assert {"skfairverify.utils", "skfairverify.utils._html"} <= graph[
        "skfairverify.audit._render"]
    # no edge to the package the importer is in (it is already being imported)
    assert "skfairverify.s3p" not in graph["skfairverify.s3p._api"]


def test_find_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("forbidden", ["skfairverify.preprocessing", "skfairverify.verification"])
def test_rules_is_a_lower_layer(forbidden):
    graph = import_graph()
    rules = {m: e for m, e in graph.items() if m.split(".")[:2] == [PACKAGE, "rules"]}
    assert rules, "no skfairverify.rules package"
    bad = {
        m: sorted(t for t in e if t == forbidden or t.startswith(forbidden + "."))
        for m, e in rules.items()
    }
    assert not {m: t for m, t in bad.items() if t}


def _deferred_imports(path: Path) -> list[str]:
    """Own-package imports of a module that are not at its top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    return [
        f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and id(node) not in top
        and (node.level or (node.module or "").split(".")[0] == PACKAGE)
    ]


def test_no_own_import_inside_a_function():
    found = {name: _deferred_imports(path) for name, path in _modules().items()
             if name not in DEFERRED_IMPORTS_ALLOWED}
    assert not {name: lines for name, lines in found.items() if lines}


def box(module: str) -> str:
    """The box of a module: its subpackage or root module (the package for its __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def test_every_box_has_a_layer():
    assert {box(m) for m in import_graph()} == set(LAYER)


def test_each_box_imports_only_lower_layers():
    bad = sorted(f"{m} -> {t}" for m, edges in import_graph().items() for t in edges
                 if box(t) != box(m) and LAYER[box(t)] >= LAYER[box(m)])
    assert not bad, "imports against the layers of docs/architecture.md:\n" + "\n".join(bad)


def _architecture_rows() -> dict[str, tuple[int, set[str] | None]]:
    """box -> (layer, the boxes it may import; None for "every box") of the page's table."""
    rows = {}
    for layer, name, allowed in re.findall(r"^\| (\d+) \| `([\w.]+)` \|[^|\n]*\| ([^|\n]*) \|$",
                                           ARCHITECTURE.read_text(encoding="utf-8"), re.M):
        names = set(re.findall(r"`([\w.]+)`", allowed))
        rows[name] = (int(layer), None if allowed.strip() == "every box" else names)
    return rows


def test_architecture_page_states_the_layers():
    rows = _architecture_rows()
    assert set(rows) == set(LAYER)
    for name, (layer, allowed) in rows.items():
        assert layer == LAYER[name], name
        below = {b for b, i in LAYER.items() if i < layer}
        assert allowed is None and layer == len(LAYERS) - 1 or allowed == below, name


def test_ensembles_imports_only_lower_layers():
    """skfairverify.ensembles builds on s3p, rules and utils only."""
    graph = import_graph()
    allowed = ("skfairverify.ensembles", "skfairverify.s3p", "skfairverify.rules",
               "skfairverify.utils")
    ensembles = {m: e for m, e in graph.items() if m.split(".")[:2] == [PACKAGE, "ensembles"]}
    assert ensembles, "no skfairverify.ensembles package"
    bad = {m: sorted(t for t in e if not any(t == a or t.startswith(a + ".") for a in allowed))
           for m, e in ensembles.items()}
    assert not {m: t for m, t in bad.items() if t}
