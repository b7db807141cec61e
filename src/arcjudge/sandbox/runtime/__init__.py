"""Trusted code that runs inside the sandbox: standard library only.

The files of this package are copied or mounted into sandboxes and run with a bare
``python -I``; they must not import anything from ``arcjudge`` or third-party packages.
"""
