"""edgecc: an ahead-of-time compiler from quantized neural networks to plain C."""
__version__ = "0.1.0"
