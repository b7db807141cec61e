"""arcjudge: run untrusted ARC verifiers and model-written programs safely."""

__version__ = "0.1.0"
