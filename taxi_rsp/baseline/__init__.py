"""The Spark recompute baseline of Q1/Q2 (independent of the engine).

It recomputes every evaluation instant from the raw window contents, so its cost per
output is that of answering the query from scratch; ``taxi-rsp verify`` compares its
files with the engine's. Shares only :mod:`taxi_rsp.spec` constants with the engine.
"""
