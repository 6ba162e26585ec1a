"""``python -m rag``: the core's command line, without the Slack commands."""

import sys

from rag.cli import main

sys.exit(main())
