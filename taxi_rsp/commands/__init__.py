"""One module per `taxi-rsp` sub-command; see :mod:`taxi_rsp.cli`."""
