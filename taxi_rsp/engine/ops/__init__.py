"""Physical operators. Each consumes and produces *deltas*: ``(row, multiplicity)``
pairs where ``row`` is a tuple of term ids laid out by the operator's ``schema`` and a
negative multiplicity is a retraction (a negative tuple, CQELS DEBS 2015 §3.1)."""
