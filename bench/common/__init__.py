"""Parts the benchmarks share: data paths, workloads and generated sources, measuring.

``python bench/x.py`` puts ``bench/`` on ``sys.path``, so the scripts import these as
``from common import data`` and so on. Everything here but ``common.harness`` is standard
library only at import time (``validate_full.py`` runs its raw loop in the runtime image).
"""
