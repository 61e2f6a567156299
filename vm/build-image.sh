#!/bin/sh
# Build the grading image into vm/build/image (see docs/grading.md).
# Needs root, mmdebstrap and e2fsprogs; contacts only the Debian and PyPI registries.
#   vm/build-image.sh [--out DIR] [--git-ref REF] [--source-date-epoch N]
set -eu
cd "$(dirname "$0")/.."
exec "${PYTHON:-.venv/bin/python}" -m taxi_rsp.cli vm build "$@"
