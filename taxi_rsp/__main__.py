"""``python -m taxi_rsp``: the same command line as ``taxi-rsp``."""

import sys

from taxi_rsp.cli import main

sys.exit(main())
