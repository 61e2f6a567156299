"""taxi-rsp: a CQELS-style RDF stream processing engine for the DEBS 2015 taxi challenge."""

__version__ = "0.1.0"
