"""Griffe extension: the reStructuredText roles of numpydoc docstrings as Markdown.

mkdocstrings renders docstrings as Markdown; the package's docstrings follow numpydoc
and scikit-learn, whose cross-references are Sphinx roles. This rewrites
``:class:`~pkg.Name``` to ```Name```, ``:func:`pkg.f``` to ```pkg.f```, ``:term:`fit```
to ```fit``` and ``:math:`x``` to ```x```, and a ``.. math::`` directive to a code
block, before the numpy-style parser reads the docstring.
"""

from __future__ import annotations

import re

try:
    import griffe
except ImportError:  # only the docs build needs the extension; gen_api.py needs the rest
    griffe = None

_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`<]*?)(?:\s*<([^`>]+)>)?`")
_MATH = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*\n(?:[ \t]*\n)?", re.M)


def _role(match: re.Match) -> str:
    tilde, text, _target = match.groups()
    text = text.strip()
    if tilde:
        text = text.rsplit(".", 1)[-1]
    return f"`{text}`"


def rst_to_markdown(text: str) -> str:
    """Rewrite the Sphinx roles and math directives of a docstring as Markdown."""
    text = _ROLE.sub(_role, text)
    return _MATH.sub(lambda m: f"{m.group('indent')}Formula:\n\n", text)


if griffe is not None:

    class RstRoles(griffe.Extension):
        """Rewrite every docstring's Sphinx roles before it is parsed."""

        def on_object(self, *, obj, **kwargs) -> None:
            if obj.docstring is not None:
                obj.docstring.value = rst_to_markdown(obj.docstring.value)
