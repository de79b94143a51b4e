# SPDX-License-Identifier: MIT
"""Builds hipobj._core, a C extension on the stable ABI (Python 3.11+),
against libhipobj_s3 and libhipobj. Where they are:

  HIPOBJ_BUILD_DIR=DIR  a CMake build directory of this repository,
                        absolute or relative to the repository root (the
                        libraries are found there, with an rpath to it);
  otherwise             pkg-config hipobj_s3 (an installed hipObject).

HIPOBJ_WERROR=1 turns warnings into errors."""
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOURCES = ["module.c", "client.c", "glue.c", "result.c", "errors.c",
           "target.c", "regcache.c", "gpu.c"]


def from_build_dir(build):
    build = os.path.join(REPO, build)  # relative: to the repository
    libs = [os.path.join(build, "src"),
            os.path.join(build, "integrations", "curl")]
    return dict(include_dirs=[os.path.join(REPO, "include"),
                              os.path.join(REPO, "integrations", "curl",
                                           "include")],
                library_dirs=libs, runtime_library_dirs=libs,
                libraries=["hipobj_s3", "hipobj"])


def from_pkg_config():
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs",
                                "hipobj_s3"], check=True, text=True,
                               capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("hipobj: libhipobj_s3 not found by pkg-config (%s):"
                         " install hipObject (cmake --install) or set "
                         "HIPOBJ_BUILD_DIR to a build directory" % e)
    opts = dict(include_dirs=[], library_dirs=[], runtime_library_dirs=[],
                libraries=[])
    for f in shlex.split(flags):
        if f.startswith("-I"):
            opts["include_dirs"].append(f[2:])
        elif f.startswith("-L"):
            opts["library_dirs"].append(f[2:])
            opts["runtime_library_dirs"].append(f[2:])
        elif f.startswith("-l"):
            opts["libraries"].append(f[2:])
    if "hipobj" not in opts["libraries"]:
        opts["libraries"].append("hipobj")
    return opts


build_dir = os.environ.get("HIPOBJ_BUILD_DIR")
opts = from_build_dir(build_dir) if build_dir else from_pkg_config()
cflags = ["-std=gnu17", "-Wall", "-Wextra", "-Wshadow",
          "-Wmissing-prototypes", "-Wno-unused-parameter",
          "-fvisibility=hidden"]
if os.environ.get("HIPOBJ_WERROR") == "1":
    cflags.append("-Werror")

core = Extension(
    "hipobj._core",
    sources=[os.path.join("src", s) for s in SOURCES],
    define_macros=[("Py_LIMITED_API", "0x030B0000")],
    py_limited_api=True,
    extra_compile_args=cflags,
    **opts)

setup(ext_modules=[core], options={"bdist_wheel": {"py_limited_api": "cp311"}})
