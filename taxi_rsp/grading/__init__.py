"""Grading of challenge submissions inside a bootable Debian VM image.

The host side lives here: the submission manifest (:mod:`.manifest`), the image build
(:mod:`.image`), the QEMU launcher (:mod:`.qemu`), the exchange disk (:mod:`.iodisk`),
the line-by-line grading (:mod:`.compare`, :mod:`.delays`, :mod:`.outputs`), the
ranking (:mod:`.leaderboard`) and the orchestration of one run (:mod:`.grader`). The
guest side (PID 1 entry point and submission runner) lives in ``vm/guest/``.
"""
