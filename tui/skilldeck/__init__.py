"""Skilldeck: find, check, load and govern Agent Skills."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skilldeck")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+src"
