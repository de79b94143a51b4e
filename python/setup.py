# SPDX-License-Identifier: MIT
"""Builds hipobj._core, a C extension on the stable ABI (Python 3.11+),
against libhipobj_s3 and libhipobj. Where they come from, first match:

  HIPOBJ_BUILD_DIR=DIR  a CMake build directory of this repository,
                        absolute or relative to the repository root (the
                        libraries are found there, with an rpath to it);
  pkg-config hipobj_s3  an installed hipObject (cmake --install);
  otherwise             built here: CMake runs on this repository (the
                        directory above python/) for the targets hipobj and
                        hipobj_s3 only, and both libraries are copied into
                        the package beside the extension, which finds them
                        through its run path ($ORIGIN). The wheel is then
                        self-contained but for Debian's libcurl.

HIPOBJ_BUNDLE=1 builds the libraries here even when pkg-config finds an
installed hipObject. HIPOBJ_WERROR=1 turns warnings into errors (the
extension and, when built here, the libraries). CMAKE_BUILD_PARALLEL_LEVEL
caps the build's jobs (default: the processors)."""
import os
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOURCES = ["module.c", "client.c", "glue.c", "result.c", "errors.c",
           "target.c", "regcache.c", "gpu.c"]
# The libraries a bundled build ships, by the names the extension and
# libhipobj_s3 ask the loader for (their SONAMEs).
BUNDLED = [("src", "libhipobj.so.0"),
           ("integrations/curl", "libhipobj_s3.so.0")]
INCLUDES = [os.path.join(REPO, "include"),
            os.path.join(REPO, "integrations", "curl", "include")]


def from_build_dir(build):
    build = os.path.join(REPO, build)  # relative: to the repository
    libs = [os.path.join(build, "src"),
            os.path.join(build, "integrations", "curl")]
    return dict(include_dirs=list(INCLUDES), library_dirs=libs,
                runtime_library_dirs=libs, libraries=["hipobj_s3", "hipobj"])


def from_pkg_config():
    """The flags of an installed hipObject, or None."""
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs",
                                "hipobj_s3"], check=True, text=True,
                               capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
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


def choose():
    """(link options, whether to build and bundle the libraries)."""
    build_dir = os.environ.get("HIPOBJ_BUILD_DIR")
    if build_dir:
        return from_build_dir(build_dir), False
    if os.environ.get("HIPOBJ_BUNDLE") != "1":
        opts = from_pkg_config()
        if opts:
            return opts, False
    if not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        raise SystemExit(
            "hipobj: no installed hipObject (pkg-config hipobj_s3), no "
            "HIPOBJ_BUILD_DIR, and no hipObject source tree above %s to "
            "build one from" % HERE)
    return dict(include_dirs=list(INCLUDES), library_dirs=[],
                runtime_library_dirs=[], libraries=["hipobj_s3", "hipobj"],
                extra_link_args=["-Wl,-rpath,$ORIGIN"]), True


def find_cmake():
    """A cmake that runs. A venv's `cmake` can be the PyPI package's
    Python shim, which fails inside pip's isolated build (its module is
    hidden there): then the package's own binary, or another on PATH."""
    cands = []
    try:
        import cmake as cmake_pkg  # the PyPI package, when importable
        cands.append(os.path.join(cmake_pkg.CMAKE_BIN_DIR, "cmake"))
    except (ImportError, AttributeError):
        pass
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin",
                                                             "/usr/local/bin"]:
        cands.append(os.path.join(d, "cmake"))
    for c in cands:
        if os.access(c, os.X_OK) and subprocess.run(
                [c, "--version"], capture_output=True).returncode == 0:
            return c
    return None


class BuildExt(build_ext):
    """build_ext that first builds libhipobj and libhipobj_s3 with CMake
    (bundled builds only) and copies them beside the extension."""

    def run(self):
        if BUNDLE:
            self.build_libraries()
        super().run()

    def build_libraries(self):
        cmake = find_cmake()
        if cmake is None:
            raise SystemExit("hipobj: building the C libraries needs cmake "
                             "(scripts/deps.sh installs it)")
        cmk = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        config = [
            cmake, "-S", REPO, "-B", cmk, "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_TESTING=OFF", "-DHIPOBJ_BUILD_SERVER=OFF",
            "-DHIPOBJ_BUILD_TOOLS=ON", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
            "-DCMAKE_INSTALL_RPATH=$ORIGIN",
            "-DHIPOBJ_WERROR=%s" % ("ON" if WERROR else "OFF")]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL",
                              str(os.cpu_count() or 1))
        build = [cmake, "--build", cmk, "-j", jobs,
                 "--target", "hipobj", "hipobj_s3"]
        for cmd in (config, build):
            self.announce(" ".join(cmd), level=2)
            r = subprocess.run(cmd, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
            if r.returncode:
                raise SystemExit("hipobj: %s failed:\n%s"
                                 % (" ".join(cmd[:2]), r.stdout[-4000:]))
        pkg = os.path.join(HERE if self.inplace else self.build_lib, "hipobj")
        os.makedirs(pkg, exist_ok=True)
        for sub, name in BUNDLED:
            # copy the file the SONAME link names, under the SONAME
            shutil.copyfile(os.path.join(cmk, sub, name),
                            os.path.join(pkg, name))
            os.chmod(os.path.join(pkg, name), 0o755)
        for ext in self.extensions:
            ext.library_dirs = [os.path.join(cmk, sub) for sub, _ in BUNDLED]


WERROR = os.environ.get("HIPOBJ_WERROR") == "1"
opts, BUNDLE = choose()
cflags = ["-std=gnu17", "-Wall", "-Wextra", "-Wshadow",
          "-Wmissing-prototypes", "-Wno-unused-parameter",
          "-fvisibility=hidden"]
if WERROR:
    cflags.append("-Werror")

core = Extension(
    "hipobj._core",
    sources=[os.path.join("src", s) for s in SOURCES],
    define_macros=[("Py_LIMITED_API", "0x030B0000")],
    py_limited_api=True,
    extra_compile_args=cflags,
    **opts)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt},
      options={"bdist_wheel": {"py_limited_api": "cp311"}})
