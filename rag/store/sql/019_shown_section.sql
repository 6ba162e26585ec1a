-- The runbook section an answer card shows (issue 28): an index into the cited runbook's
-- top-level sections, set by a section button; NULL shows the section the answer cites. Kept
-- so that a later redraw of the card (a quote toggle, a vote) keeps the section in view.
ALTER TABLE answers ADD COLUMN shown_section integer;
