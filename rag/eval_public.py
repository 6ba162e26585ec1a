"""``python -m rag.eval_public``: the public evaluation's entry point
(``rag.evaluation.public``)."""

from __future__ import annotations

import sys

from rag.evaluation.public import main

if __name__ == "__main__":
    sys.exit(main())
