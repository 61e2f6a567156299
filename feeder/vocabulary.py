"""The RDF vocabulary of a trip event (one named graph per trip).

Each accepted CSV line becomes the graph ``<http://debs2015.org/graph/{seq}>`` holding:
``<trip/{seq}> a taxi:Trip``, ``taxi:medallion``, ``taxi:hackLicense``,
``taxi:paymentType`` (strings), ``taxi:pickupDatetime``, ``taxi:dropoffDatetime``
(xsd:dateTime), the four coordinates (xsd:decimal, exact, rounded half to even to 9
decimals), ``taxi:fareAmount`` and ``taxi:tipAmount`` (xsd:decimal in dollars, rounded
to cents; omitted when the field is missing or not a number, kept when negative),
``taxi:tripTimeSecs``, ``taxi:tripDistance`` (when they parse) and ``taxi:seq`` (the
line number).
"""

from __future__ import annotations

from taxi_rsp.rdf.namespaces import RDF_TYPE, TAXI

TRIP_PREFIX = "http://debs2015.org/trip/"
GRAPH_PREFIX = "http://debs2015.org/graph/"
TRIP_CLASS = TAXI + "Trip"

PREDICATES = {
    name: TAXI + name
    for name in (
        "medallion", "hackLicense", "paymentType", "pickupDatetime", "dropoffDatetime",
        "pickupLongitude", "pickupLatitude", "dropoffLongitude", "dropoffLatitude",
        "fareAmount", "tipAmount", "tripTimeSecs", "tripDistance", "seq",
    )
}

__all__ = ["TRIP_PREFIX", "GRAPH_PREFIX", "TRIP_CLASS", "PREDICATES", "RDF_TYPE"]
