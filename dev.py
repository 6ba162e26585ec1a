"""The front door of a fresh clone; needs only Python 3.11+ and pip.

python3 dev.py demo        # set up, then run the local job on the embedded defaults
python3 dev.py test        # set up, then run the test suite
python3 dev.py lint | typecheck | bench-ingest | setup
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".installed"
PYTEST_NO_TESTS = 5


def setup() -> None:
    """Create .venv and install the project with its dev extras, again when pyproject changes."""
    if STAMP.exists() and STAMP.stat().st_mtime >= (ROOT / "pyproject.toml").stat().st_mtime:
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", flush=True)
        venv.create(VENV, with_pip=True)
    print("dev.py: installing runbook-bot and its dev tools into .venv", flush=True)
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[dev]"])
    STAMP.touch()


def run(command: list[str]) -> int:
    completed = subprocess.run(command, cwd=ROOT, check=False)
    if completed.returncode != 0 and command[1:3] == ["-m", "pip"]:
        sys.exit(completed.returncode)
    return completed.returncode


def main(argv: list[str]) -> int:
    action = argv[0] if argv else "help"
    commands = {
        "demo": [[str(BIN / "runbook"), "start"]],
        "lint": [
            [str(BIN / "ruff"), "check", "rag", "bot", "tests", "bench", "dev.py"],
            [str(BIN / "ruff"), "format", "--check", "rag", "bot", "tests", "bench", "dev.py"],
        ],
        "typecheck": [[str(BIN / "mypy")]],
        "bench-ingest": [[str(BIN / "runbook"), "bench", "ingest"]],
        "setup": [],
    }
    if action == "test":
        setup()
        status = run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", *argv[1:]])
        if status == PYTEST_NO_TESTS:
            print("dev.py: pytest collected no tests; that is a failure", file=sys.stderr)
            return 1
        return status
    if action not in commands:
        print(__doc__)
        return 0 if action == "help" else 2
    setup()
    for command in commands[action]:
        status = run(command + argv[1:])
        if status != 0:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
