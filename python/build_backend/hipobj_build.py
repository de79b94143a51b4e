# SPDX-License-Identifier: MIT
"""The package's PEP 517 build backend: setuptools (setup.py) with the
interpreter's own setuptools and wheel.

pip builds in an isolated environment and installs the backend's
requirements into it from a package index. Machines set up by
scripts/deps.sh have no index, only Debian's python3-setuptools and
python3-wheel, which the isolated environment hides. So this backend
requires nothing from an index and, when the isolation hid them, puts the
interpreter's own site directory that holds each missing one back on
sys.path (after everything else, so a setuptools that pip did install
still wins); in a venv made without --system-site-packages, whose
ensurepip brings setuptools but not wheel, the base interpreter's (Debian's
python3-wheel). With --no-build-isolation it is plain
setuptools.build_meta."""
import importlib.util
import os
import site
import sys


def _bring(module):
    """Append the first site directory that holds `module`."""
    if importlib.util.find_spec(module) is not None:
        return
    dirs = site.getsitepackages() + site.getsitepackages([sys.base_prefix])
    for path in dirs:
        if os.path.isdir(os.path.join(path, module)):
            if path not in sys.path:
                sys.path.append(path)
            importlib.invalidate_caches()
            return


_bring("setuptools")
_bring("wheel")

try:
    from setuptools import build_meta as _meta
except ImportError as e:  # pragma: no cover
    raise ImportError("hipobj: building needs setuptools and wheel "
                      "(Debian: python3-setuptools python3-wheel; "
                      "scripts/deps.sh installs them)") from e


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


prepare_metadata_for_build_wheel = _meta.prepare_metadata_for_build_wheel
build_wheel = _meta.build_wheel
build_sdist = _meta.build_sdist
if hasattr(_meta, "build_editable"):
    build_editable = _meta.build_editable
    prepare_metadata_for_build_editable = \
        _meta.prepare_metadata_for_build_editable
