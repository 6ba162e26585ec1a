"""A log capture that fails the test when a secret, or question text at INFO or above, is logged."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field


@dataclass
class LogGuard(logging.Handler):
    secrets: set[str] = field(default_factory=set)
    private_texts: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        logging.Handler.__init__(self, level=logging.DEBUG)

    def __hash__(self) -> int:
        return id(self)

    def forbid_secret(self, value: str) -> None:
        """Never in any log line, at any level."""
        self.secrets.add(value)

    def forbid_text(self, value: str) -> None:
        """Question or answer text: allowed at DEBUG only."""
        if len(value) >= 12:
            self.private_texts.add(value)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = record.getMessage()
        except (TypeError, ValueError):
            line = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            line += f" {record.exc_info[1]!r}"
        for secret in self.secrets:
            if secret in line:
                self.violations.append(f"{record.name}: secret {secret[:6]}… logged")
        if record.levelno >= logging.INFO:
            for text in self.private_texts:
                if text in line:
                    self.violations.append(f"{record.name}: question text at {record.levelname}")

    def take(self) -> list[str]:
        found, self.violations = self.violations, []
        return found
