"""What a section button carries, and the check a click must pass before its section shows.

A button names the answer, the runbook and the section index; none of it is trusted. The
answer is loaded under the tenant of the workspace the click came from, and the runbook must be
the one that answer names as loaded for that tenant, so a document id from another tenant (or
any other document) is refused rather than looked up.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.answers.store import StoredAnswer


class SectionChoice(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    answer_id: str = Field(alias="a", max_length=64)
    document_id: str = Field(alias="d", max_length=1000)
    section: int = Field(alias="s", ge=0)

    def value(self) -> str:
        """The compact JSON a Slack button or option carries."""
        return self.model_dump_json(by_alias=True)


def section_value(answer_id: str, document_id: str, section: int) -> str:
    return SectionChoice(a=answer_id, d=document_id, s=section).value()


def parse_choice(value: str) -> SectionChoice | None:
    try:
        return SectionChoice.model_validate_json(value)
    except ValidationError:
        return None


def allowed(stored: StoredAnswer, choice: SectionChoice) -> bool:
    """Whether ``choice`` names a section of the runbook ``stored`` names (for its tenant)."""
    view = stored.result.runbook
    return (
        view is not None
        and view.document_id == choice.document_id
        and choice.section in view.offered()
    )
