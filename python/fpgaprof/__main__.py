"""``python -m fpgaprof ...``: the fpgaprof command line (fpgaprof/cli/)."""

import sys

from fpgaprof.cli import main

if __name__ == "__main__":
    sys.exit(main())
