"""``python -m bot``: the full ``runbook`` command line."""

import sys

from bot.cli import main

sys.exit(main())
