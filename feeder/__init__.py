"""The Feeder: taxi CSV lines -> validated RDF graph events (SPEC §1). Installed as
``taxi_rsp.feeder``."""

from taxi_rsp.feeder.reader import Feeder
from taxi_rsp.feeder.records import FeedStats, TripStamps, trip_stamps

__all__ = ["Feeder", "FeedStats", "TripStamps", "trip_stamps"]
