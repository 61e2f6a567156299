"""The incremental CQELS engine: physical operators, their state, the event-time clock
and query registration (:class:`taxi_rsp.engine.engine.Engine`)."""
