"""Incident threads for the draft tests: the Kafka disk incident, as responders write it."""

from __future__ import annotations

from bot.core.drafts.thread import IncidentThread, ThreadMessage

LINK = "https://acme.slack.com/archives/C_INC/p"
SECRET = "Hx9-kafka-admin-7731"
COMMANDS = (
    "kafka-log-dirs --bootstrap-server kafka-2:9092 --describe --broker-list 2",
    "kafka-configs --bootstrap-server kafka-2:9092 --alter --entity-type topics "
    "--entity-name clickstream-raw --add-config retention.ms=172800000",
    "kafka-topics --bootstrap-server kafka-2:9092 --describe --under-replicated-partitions",
)
ALERT = (
    "[FIRING:1] KafkaBrokerDiskUsageHigh kafka-2 (prod)\n"
    "*Alert:* KafkaBrokerDiskUsageHigh - critical\n"
    "*Description:* disk usage 93% on /var/lib/kafka of broker kafka-2 (threshold 90%)\n"
    "*Details:*\n • *alertname:* `KafkaBrokerDiskUsageHigh`\n • *instance:* `kafka-2:9308`\n"
    " • *severity:* `critical`"
)
REPLIES = (
    ("U_PRIYA", "Priya", "looking. disk on kafka-2 at 93%, growing ~1%/10min"),
    ("U_PRIYA", "Priya", f"checked which topics are biggest: `{COMMANDS[0]}`"),
    ("U_TOMASZ", "Tomasz", "clickstream-raw is 600G, retention is 7d but it should be 2d"),
    ("U_PRIYA", "Priya", f"setting retention:\n```\n{COMMANDS[1]}\n```"),
    ("U_TOMASZ", "Tomasz", f"fyi the admin UI login is admin / password={SECRET} if you need it"),
    ("U_PRIYA", "Priya", "disk going down now, 81%"),
    ("U_TOMASZ", "Tomasz", f"also verify nothing is under-replicated: `{COMMANDS[2]}`"),
    ("U_PRIYA", "Priya", "none under-replicated, disk at 64%. that fixed it"),
    ("U_TOMASZ", "Tomasz", "should we page at 85% instead of 90%?"),
)


def link(n: int) -> str:
    return f"{LINK}17000000000000{n:02d}"


def kafka_thread(replies: tuple[tuple[str, str, str], ...] = REPLIES) -> IncidentThread:
    root = ThreadMessage("1", "U_AM", "alertmanager", ALERT, link(0), from_bot=True)
    messages = [root] + [
        ThreadMessage(str(n + 2), user, name, text, link(n + 1))
        for n, (user, name, text) in enumerate(replies)
    ]
    return IncidentThread("slack", "T_ACME", "C_INC", "inc-kafka", "1", link(0), tuple(messages))
