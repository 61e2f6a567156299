"""The Feeder: taxi CSV lines -> validated RDF graph events (SPEC §1). Installed as
``taxi_rsp.feeder``."""

from taxi_rsp.feeder.reader import Feeder
from taxi_rsp.feeder.records import FeedStats, TripMeta

__all__ = ["Feeder", "FeedStats", "TripMeta"]
