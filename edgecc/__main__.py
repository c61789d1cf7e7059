"""`python -m edgecc`: the same command line as the `edgecc` console script."""
import sys

from edgecc.cli import main

sys.exit(main())
