"""`taxi-rsp vm`: build the grading image and boot it.

    $ taxi-rsp vm build --out vm/build/image
    $ taxi-rsp vm boot --image vm/build/image      # boot, report boot-to-exit time
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    from taxi_rsp.grading.image import DEFAULT_OUT

    parser = subparsers.add_parser("vm", help="build or boot the grading VM image",
                                   description="`vm build` makes the Debian image `taxi-rsp grade` runs "
                                   "submissions in; `vm boot` boots it once to check it and time the boot.")
    actions = parser.add_subparsers(dest="vm_command", metavar="ACTION", required=True)

    build = actions.add_parser("build", help="build the Debian grading image (root, minutes, ~3 GB)")
    build.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"image directory (default {DEFAULT_OUT})")
    build.add_argument("--source-date-epoch", type=int, default=None,
                       help="timestamp for a reproducible build (default: $SOURCE_DATE_EPOCH, else last commit)")
    build.add_argument("--git-ref", default=None,
                       help="build the project as committed at this ref (default: the working tree)")
    build.set_defaults(func=_build)

    boot = actions.add_parser("boot", help="boot the image once with an empty job and report timings")
    boot.add_argument("--image", type=Path, default=DEFAULT_OUT, help="image directory")
    _add_vm_options(boot)
    boot.set_defaults(func=_boot)


def _add_vm_options(parser: argparse.ArgumentParser) -> None:
    from taxi_rsp.grading.qemu import VmConfig

    parser.add_argument("--cpus", type=int, default=VmConfig.cpus, help="vCPUs (default %(default)s)")
    parser.add_argument("--memory", type=int, default=VmConfig.memory_mb, help="RAM in MiB (default %(default)s)")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                        help="QEMU accelerator (auto: TCG unless TAXI_RSP_VM_ACCEL=kvm)")


def _build(args: argparse.Namespace) -> int:
    from taxi_rsp.grading.image import build_image

    manifest = build_image(args.out, args.source_date_epoch, args.git_ref)
    files = manifest["files"]
    print(json.dumps({"out": str(args.out), "build_seconds": manifest["build_seconds"],
                      "bytes": {k: v["bytes"] for k, v in files.items()}}, indent=2))
    return 0


def _boot(args: argparse.Namespace) -> int:
    from taxi_rsp.grading.grader import smoke_boot
    from taxi_rsp.grading.image import ImageFiles
    from taxi_rsp.grading.qemu import VmConfig

    if args.cpus < 1 or args.memory < 256:
        raise UserError("--cpus must be >= 1 and --memory >= 256 (MiB)")
    config = VmConfig(cpus=args.cpus, memory_mb=args.memory, accel=args.accel,
                      auto_accel=ExecutionConfig.from_environment().vm_accel)
    print(json.dumps(smoke_boot(ImageFiles(args.image), config), indent=2))
    return 0
