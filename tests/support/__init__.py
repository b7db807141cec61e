"""Helpers shared by tests and benchmarks (never collected: no ``test_`` modules here).

Import them as ``from tests.support.helpers import deadline``: pytest puts the checkout's
root on ``sys.path`` (``tests/`` is a package), and ``bench/`` scripts put it there themselves.
"""
