"""Indexes over operator state: the ring index (per-key newest-first rings with a
live counter as the probe's stop condition and lazy deletion) and the one-way index
(per-key counters, used by MINUS / NOT EXISTS)."""
