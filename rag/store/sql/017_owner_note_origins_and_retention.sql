-- Owner notes by origin (issue 27): a 👎 note remembers the surface it came from, and Teams
-- notes the Bot Connector URL to send through. A batch is sent per origin: Slack notes with the
-- bot of the workspace they came from (only when that workspace maps to the note's tenant),
-- Teams notes through the Bot Connector, so one origin's failure never takes another's down.
ALTER TABLE owner_notifications
    ADD COLUMN surface text NOT NULL DEFAULT 'slack' CHECK (surface IN ('slack', 'teams')),
    ADD COLUMN service_url text;

-- An owner name (or the fallback) may have a target per surface: a Slack user, group or
-- channel, and a Teams channel.
ALTER TABLE owner_targets
    ADD COLUMN surface text NOT NULL DEFAULT 'slack' CHECK (surface IN ('slack', 'teams'));
ALTER TABLE owner_targets DROP CONSTRAINT owner_targets_pkey;
ALTER TABLE owner_targets ADD PRIMARY KEY (tenant_id, name, surface);

-- Retention (issue 27): once an answer's text expires, its facts keep only the topics another
-- question shares (a name or a password typed into one question is not a topic); this marks the
-- facts already pruned, so each is pruned once.
ALTER TABLE answer_facts ADD COLUMN topics_pruned boolean NOT NULL DEFAULT false;
