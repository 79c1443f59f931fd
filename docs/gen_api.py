"""Generate docs/api.md from the docstrings of the public names.

Run ``python docs/gen_api.py`` after changing a public docstring; a test checks that
``docs/api.md`` is in step with the code.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

MODULES = [
    "skfairverify",
    "skfairverify.s3p",
    "skfairverify.datasets",
    "skfairverify.metrics",
    "skfairverify.plotting",
    "skfairverify.audit",
]


def public_objects():
    """Yield (module name, public name, object) for every documented public name."""
    seen = set()
    for mod_name in MODULES:
        module = importlib.import_module(mod_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield mod_name, name, obj


def _signature(name, obj) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


def render() -> str:
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings by `python docs/gen_api.py`; do not edit by hand.",
        "",
    ]
    current = None
    for mod_name, name, obj in public_objects():
        if mod_name != current:
            lines += [f"## `{mod_name}`", ""]
            current = mod_name
        kind = "class" if inspect.isclass(obj) else "function"
        lines += [f"### `{name}` ({kind})", "", "```python", _signature(name, obj), "```", ""]
        doc = inspect.getdoc(obj) or ""
        lines += ["```text", doc, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    out = Path(__file__).with_name("api.md")
    out.write_text(render(), encoding="utf-8")
    print(f"wrote {out}")
