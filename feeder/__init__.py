"""The Feeder: taxi CSV lines -> validated RDF graph events (SPEC §1)."""

from feeder.reader import Feeder
from feeder.records import FeedStats, TripMeta

__all__ = ["Feeder", "FeedStats", "TripMeta"]
