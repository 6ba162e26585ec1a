-- Asks from the command line are answers too (issue 38): recorded with their origin, so the gap
-- report counts what on-calls asked from a terminal. No workspace, channel or thread.
ALTER TABLE answers DROP CONSTRAINT answers_entry_check;
ALTER TABLE answers ADD CONSTRAINT answers_entry_check
    CHECK (entry IN ('mention', 'command', 'shortcut', 'alert', 'follow_up', 'dm', 'cli'));
