"""``python -m fpgaprof.cli ...``: the fpgaprof command line."""

import sys

from fpgaprof.cli import main

if __name__ == "__main__":
    sys.exit(main())
