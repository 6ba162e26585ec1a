"""``python -m rag.gate_fit``: the gate (and ranker) refit's entry point
(``rag.evaluation.gate_fit``)."""

from __future__ import annotations

import sys

from rag.evaluation.gate_fit import main

if __name__ == "__main__":
    sys.exit(main())
