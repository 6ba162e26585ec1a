"""The front door of a fresh clone; needs only Python 3.11+ and pip.

python3 dev.py demo        # set up, then run the local job on the embedded defaults
python3 dev.py test        # set up, then run the whole test suite
python3 dev.py test --fast # everything but the tests marked slow (end-to-end, eval, faults)
python3 dev.py lint | typecheck | bench-ingest | setup
"""

from __future__ import annotations

import importlib.util
import shutil
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
    if VENV.exists() and not venv_has_pip():
        # A venv whose creation failed half-way (no pip) would fail the same way forever.
        print("dev.py: .venv is half-made (it has no pip); rebuilding it", flush=True)
        shutil.rmtree(VENV)
    if not VENV.exists():
        create_venv()
    print("dev.py: installing runbook-bot and its dev tools into .venv", flush=True)
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[dev]"])
    STAMP.touch()


def venv_has_pip() -> bool:
    python = BIN / "python"
    if not python.exists():
        return False
    probe = [str(python), "-m", "pip", "--version"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def create_venv() -> None:
    """Create .venv with pip, or explain which package this Python lacks and exit."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    missing = (
        f"dev.py: {sys.executable} cannot create a virtualenv with pip: its ensurepip module "
        f"is missing. On Debian or Ubuntu install python3-venv (or python{version}-venv), "
        "then run this again."
    )
    # Checked before creating, so a failure leaves no half-made .venv behind.
    if importlib.util.find_spec("ensurepip") is None:
        sys.exit(missing)
    print("dev.py: creating .venv", flush=True)
    try:
        venv.create(VENV, with_pip=True)
    except subprocess.CalledProcessError:
        shutil.rmtree(VENV, ignore_errors=True)
        sys.exit(missing)


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
        options = [arg for arg in argv[1:] if arg != "--fast"]
        if len(options) < len(argv) - 1:
            options = ["-m", "not slow", *options]
        status = run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", *options])
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
