"""edgecc: an ahead-of-time compiler from quantized neural networks to plain C."""
from edgecc.version import __version__  # noqa: F401


def compile(model, **options):  # noqa: A001 (edgecc.compile, as the API is spelled)
    """Compile a model; see edgecc.api.compile."""
    from edgecc.api import compile as _compile
    return _compile(model, **options)


def run(model, **options):
    """Run a model on numpy inputs (host or emulated board); see edgecc.api.run."""
    from edgecc.api import run as _run
    return _run(model, **options)
