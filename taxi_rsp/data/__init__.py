"""Synthetic DEBS 2015 trip data, calibrated on the real sample shipped in the package.

* :mod:`.calibration` derives the trip templates (places, routes, fares, tips, trip
  times) from ``taxi_rsp/samples/debs2015/sample20d_first10004.csv`` when a run starts.
* :mod:`.demand` is the daily/weekly cycle of pickups (general NYC knowledge, since
  the real sample covers only the first hour of 1 January).
* :mod:`.fleet` hands trips to taxis near their last drop-off (Q2's empty taxis).
* :mod:`.dirty` corrupts a small share of lines so validation runs at scale.
* :mod:`.generator` streams the sorted CSV to disk; :mod:`.fidelity` compares a file
  against the real sample.
"""

from taxi_rsp.data.generator import SynthConfig, SynthResult, generate

__all__ = ["SynthConfig", "SynthResult", "generate"]
