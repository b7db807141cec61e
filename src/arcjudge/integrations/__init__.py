"""arcjudge inside other evaluation frameworks (each module needs its framework installed)."""
