"""One valid taxi CSV line and variants of it, for the Feeder tests.

>>> line(medallion="").startswith(",E7750A37")
True
"""

from __future__ import annotations

from taxi_rsp.spec import FIELDS

GOOD = ("07290D3599E7A0D62097A346EFCC1FB5,E7750A37CAB07D0DFF0AF7E3573AC141,2013-01-01 00:00:00,"
        "2013-01-01 00:02:00,120,0.44,-73.956528,40.716976,-73.962440,40.715008,CSH,3.50,0.50,0.50,0.00,0.00,4.50")


def line(**changes: str) -> str:
    """GOOD with some fields replaced, by SPEC field name."""
    fields = GOOD.split(",")
    for name, value in changes.items():
        fields[FIELDS.index(name)] = value
    return ",".join(fields)
