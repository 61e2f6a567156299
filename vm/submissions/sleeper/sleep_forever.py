"""A submission that hangs after writing one line, to exercise the hard time limit."""

import sys
import time
from pathlib import Path

out = Path(sys.argv[2])
(out / "q1.csv").write_text("not even a well-formed line\n")
while True:
    time.sleep(3600)
