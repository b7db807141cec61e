"""Shared core of the workflows: the engine, the result store, task inputs, outputs, statistics."""
