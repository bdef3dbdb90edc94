"""`pip install .`: runs the project's CMake for the library and the Python package, then puts in
the wheel the package (slimeccl/), the extension modules, libslimeccl.so.0 in slimeccl/lib and the
NCCL-compatible libnccl.so.2 in slimeccl/lib/slimeccl/nccl/lib (the layout of an installed prefix,
so each library finds the other as it does there).

The build uses the interpreter that runs pip and, where that environment imports torch, builds the
torch.distributed backend against it. SLIMECCL_CMAKE_ARGS adds CMake arguments (e.g.
-DSLIMECCL_WITH_CUDA=OFF); SLIMECCL_BUILD_JOBS sets the build's parallelism (default: the CPUs).
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# What an install prefix holds under these paths goes into the package.
PYTHON_INSTALL_DIR = "python"
LIBRARIES = {"lib/libslimeccl.so.0": "lib/libslimeccl.so.0",
             "lib/slimeccl/nccl/lib/libnccl.so.2": "lib/slimeccl/nccl/lib/libnccl.so.2"}


def cmake_prefixes():
    """Where CMake finds the environment's torch and a pip-installed pybind11 (the system's are
    found without help)."""
    prefixes = []
    try:
        import torch.utils
        prefixes.append(torch.utils.cmake_prefix_path)
    except ImportError:
        pass
    try:
        import pybind11
        prefixes.append(pybind11.get_cmake_dir())
    except ImportError:
        pass
    return prefixes


class CMakeBuild(build_ext):
    def run(self):
        build = Path(self.build_temp).resolve() / "cmake"
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_LIBDIR=lib", "-DSLIMECCL_BUILD_TESTS=OFF",
                "-DSLIMECCL_BUILD_PERF=OFF",
                "-DSLIMECCL_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                f"-DSLIMECCL_PYTHON_INSTALL_DIR={PYTHON_INSTALL_DIR}", "-DSLIMECCL_PYTHON_RPATH=$ORIGIN/lib"]
        prefixes = cmake_prefixes()
        if prefixes:
            args.append("-DCMAKE_PREFIX_PATH=" + ";".join(prefixes))
        args += shlex.split(os.environ.get("SLIMECCL_CMAKE_ARGS", ""))
        jobs = os.environ.get("SLIMECCL_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        subprocess.run(["cmake", "--build", str(build), "-j", jobs], check=True)
        package = Path(self.build_lib) / "slimeccl"
        with tempfile.TemporaryDirectory() as staged:
            subprocess.run(["cmake", "--install", str(build), "--prefix", staged], check=True,
                           stdout=subprocess.DEVNULL)
            staged = Path(staged)
            shutil.copytree(staged / PYTHON_INSTALL_DIR / "slimeccl", package, dirs_exist_ok=True)
            for source, target in LIBRARIES.items():
                (package / target).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staged / source, package / target)  # the file a symlink names, by its soname
                os.chmod(package / target, 0o755)


# One placeholder extension makes the wheel platform-specific; CMakeBuild builds everything.
setup(packages=["slimeccl"], package_dir={"": "python"}, ext_modules=[Extension("slimeccl._core", sources=[])],
      cmdclass={"build_ext": CMakeBuild}, zip_safe=False)
