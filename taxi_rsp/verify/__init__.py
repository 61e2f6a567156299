"""Comparing output folders, delay statistics and the Table-1 report."""
