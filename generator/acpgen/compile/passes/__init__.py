"""Stage 3, the IR passes: each reads the lowered IR and returns it with what
it found (Python names, defaults, capabilities, the method table, gates, the
rule set and its rules, the analysis before rendering)."""
