"""The package version (pyproject.toml's), in a module of its own so that edgecc.build.manifest and
edgecc.report read it without importing the package root (whose API functions import them)."""
__version__ = "0.1.0"
