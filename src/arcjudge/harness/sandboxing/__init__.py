"""The commands about the sandbox itself: run, selfcheck, image, sandbox prune."""
