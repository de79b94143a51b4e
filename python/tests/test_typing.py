# SPDX-License-Identifier: MIT
"""The type hints (.pyi) name every public name of the integrations and
every public method of their classes, and nothing that is gone."""
import ast
import importlib
import inspect
import os

import pytest


def stub_names(path):
    tree = ast.parse(open(path).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body
                              if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


@pytest.mark.parametrize("name,needs", [("fsspec", "fsspec"),
                                        ("data", "torch"),
                                        ("dcp", "torch.distributed.checkpoint")])
def test_stubs_match(name, needs):
    pytest.importorskip(needs, reason="%s is not installed" % needs)
    mod = importlib.import_module("hipobj." + name)
    stubs = stub_names(os.path.splitext(mod.__file__)[0] + ".pyi")
    for n, obj in vars(mod).items():
        if n.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert n in stubs, "%s.%s has no hint" % (name, n)
        if inspect.isclass(obj):
            own = {m for m, v in vars(obj).items()
                   if not m.startswith("_") and callable(v) or
                   isinstance(v, (property, classmethod))}
            own = {m for m in own if not m.startswith("_")}
            missing = own - stubs[n]
            # attributes hinted as annotations are not functions
            assert not {m for m in missing
                        if callable(getattr(obj, m, None))}, \
                "%s.%s: no hint for %s" % (name, n, sorted(missing))
    for n in stubs:
        assert n.startswith("_") or hasattr(mod, n), \
            "%s.pyi names %s, which is gone" % (name, n)


def test_load_safetensors_hint_has_progress():
    import hipobj
    sig = inspect.signature(hipobj.load_safetensors)
    assert "progress" in sig.parameters
    stubs = stub_names(os.path.join(os.path.dirname(hipobj.__file__),
                                    "__init__.pyi"))
    assert "load_safetensors" in stubs
