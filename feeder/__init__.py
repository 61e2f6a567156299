"""The Feeder: taxi CSV lines -> validated RDF graph events (SPEC §1)."""

from feeder.reader import Feeder, FeedStats, TripMeta

__all__ = ["Feeder", "FeedStats", "TripMeta"]
