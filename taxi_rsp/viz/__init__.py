"""Maps of the answers: grid geometry (SPEC §2), the pickup-density background, and the
matplotlib drawings of Q1 routes and Q2 cells used by `taxi-rsp report`."""
