"""Helpers the tests share: table writers, reference joins, Spark's own writes, where ../shared is.

Test modules import helpers from here, never from one another.
"""
