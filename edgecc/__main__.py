import sys

from edgecc.cli import main

sys.exit(main())
