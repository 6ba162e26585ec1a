"""The table of state-changing command patterns: what a command does, and how it is spelled.

Ordered: the kinds an on-call must never paste without thinking (deletes, kills, force-pushes,
drops, scales to zero, evicts, reboots, stops, fails over) come first, so a command's first kind
is its worst; then every other change to a cluster, host, database, queue, repository or cloud
resource. Measured on every command of the public collections and the demo corpus
(``evals/state_changes``, ``docs/answer-quality.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

__all__ = ["STATE_CHANGES", "StateChange"]


@dataclass(frozen=True)
class StateChange:
    """One kind of state-changing command: what it does, and how it is spelled (compiled on
    first use: the table is long, and most commands never read it)."""

    does: str
    spelling: str
    flags: int = re.IGNORECASE

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.spelling, self.flags)


def _change(does: str, pattern: str, flags: int = re.IGNORECASE) -> StateChange:
    return StateChange(does, pattern, flags)


# A command word, then anything on the same line up to a shell separator: `kubectl -n x delete`.
_ARGS = r"[^\n;&|]*?\s"
# The same, for a subcommand among the first few words only (`gcloud compute instances delete`,
# not a resource whose name holds the verb).
_VERB = r"(?:\s+(?:-{1,2}[\w-]+(?:[= ](?!-)\S+)?|[\w.:/<>${}@*-]+)){0,5}?\s+"
_KUBE = r"\b(?:kubectl|oc)\b"
# Where a command starts: a line's start (after a shell prompt: "$ ", "/prometheus $ ",
# "[root@db ~]# ", "user@host:~$ ", a bare "> " or zsh's "~ "; not a tool's own prompt such as
# "gpg/card> "), a shell separator or quote, or a word that runs the next one (`sudo`,
# `xargs -rn1`, `--`), not an argument (`grep umount`).
_AT_COMMAND = (
    r"(?:^[ \t]*(?:(?:\[[^\]\n]*\]|[\w@:~/.()-]*)\s?[$#]\s+|[>~]\s+)?|[;&|(`'\"]\s*|"
    r"\b(?:sudo|exec|xargs|ionice)(?:\s+-\w+(?:\s+\d+)?)*\s+|--\s+|\bdo\s+)"
)
# Anything up to a shell separator, across backslash-continued lines.
_SPAN = r"(?:[^\n;&|]|\\\n)*?"
# A path a redirect or copy writes that is not scratch space.
_SYSTEM_PATH = r"/(?!tmp/|var/tmp/|dev/)[\w.-]"

_WORST: tuple[StateChange, ...] = (
    _change("deletes", rf"{_KUBE}{_ARGS}delete\b"),
    _change("deletes", rf"{_AT_COMMAND}rm\s+(?:-\w+\s+)*[\w/.*~$\"'<{{-]", re.I | re.M),
    _change("deletes", rf"\b(?:crictl|docker|podman)\b{_ARGS}(?:rmi?|system\s+prune)\b"),
    _change("deletes", rf"\b(?:etcdctl\b{_ARGS}del|consul\s+kv\s+delete)\b"),
    _change("deletes", r"\b(?:FLUSHALL|FLUSHDB)\b"),
    _change("deletes", r"\bDELETE\s+FROM\b"),
    _change("deletes", r"\bredis-prune\b(?![^\n;&|]*--dry-run)"),
    _change("deletes", rf"\b(?:knife|gsutil|rbd|rados|aws\s+s3)\b{_VERB}(?:delete|rm|purge)\b"),
    _change("deletes", r"\bfind\b[^\n;&|]*\s(?:-delete\b|-exec\s+rm\b)"),
    _change("deletes", r"--dry-run=no\b"),
    _change(
        "drops",
        r"\b(?:DROP|TRUNCATE)\s+(?:TABLE|DATABASE|INDEX|SCHEMA|VIEW|ROLE|USER|TRIGGER|FUNCTION|"
        r"EXTENSION|SEQUENCE|PUBLICATION|SUBSCRIPTION|MATERIALIZED|TYPE|GROUP)\b",
    ),
    _change("drops", r"\bTRUNCATE\s+(?!-)\w"),
    _change("drops", r"\bgitlab-rake\s+\S*:drop\b"),
    _change("empties a file", r"\btruncate\s+-s\s*0\b"),
    _change(
        "kills",
        rf"{_AT_COMMAND}kill\s+(?:-\w+|[\w$`\"'%<\\])|\b(?:pkill|killall)\b",
        re.I | re.M,
    ),
    _change("kills", r"\bpg_(?:terminate|cancel)_backend\b"),
    _change("kills", r"\bsbctl\s+kill\b|\bCLIENT\s+KILL\b"),
    _change("force-pushes", r"\bgit\s+push\b[^\n;&|]*\s(?:-f|--force(?:-with-lease)?)\b"),
    _change("scales to zero", rf"{_KUBE}{_ARGS}scale\b[^\n;&|]*--replicas[= ]0\b"),
    _change("evicts pods", rf"{_KUBE}{_ARGS}(?:adm\s+)?drain\b"),
    _change("reboots", r"(?<![a-z])reboot(?![a-z])|\bshutdown\s+-[rh]\b|\bpoweroff\b"),
    _change(
        "stops or restarts a service",
        r"\b(?:systemctl|service|gitlab-ctl)\s+(?:\S+\s+)?(?:stop|restart|kill)\b",
    ),
    _change("fails over", rf"\b(?:gitlab-)?patronictl\b{_ARGS}(?:failover|switchover)\b"),
    _change(
        "fails over",
        r"\baws\s+rds\s+failover-db-cluster\b|\bSENTINEL\s+failover\b|\btest-failover\b",
    ),
    _change("rebuilds a node", rf"\b(?:gitlab-)?patronictl\b{_ARGS}(?:reinit|remove)\b"),
    _change("resets consumer offsets", r"--reset-offsets\b[^\n;&|]*--execute\b"),
)

_OTHERS: tuple[StateChange, ...] = (
    _change("scales", rf"{_KUBE}{_ARGS}scale\b|\bautoscale\b"),
    _change(
        "changes cluster objects",
        rf"{_KUBE}{_VERB}(?:apply|create|patch|edit|replace|annotate|label|taint|cordon|"
        r"uncordon|set|expose|run|import-image|start-build|new-app|new-project|tag|approve|"
        r"evict|rsync)\b",
    ),
    _change("changes cluster objects", rf"{_KUBE}{_ARGS}rollout\s+(?:restart|undo|pause|resume)"),
    _change(
        "changes cluster objects",
        rf"{_KUBE}{_ARGS}adm\s+(?:policy\s+(?:add|remove)-|upgrade\s+\S)|{_KUBE}\s+sa\s+new-token\b",
    ),
    _change("changes cluster objects", rf"{_KUBE}{_ARGS}cp\s+[^\n;&|]*\s[\w./<>-]+:\S"),
    _change(
        "changes cluster objects",
        rf"{_KUBE}\s+argo\s+rollouts\s+(?:abort|promote|undo|retry|restart|set|pause)\b|"
        r"\bkubectl\s+rook-ceph\s+mons\s+restore-quorum\b|\bcmctl\s+renew\b",
    ),
    _change(
        "deploys or rolls back", r"\bhelm\b[^\n;&|]*\s(?:install|upgrade|rollback|uninstall)\b"
    ),
    _change(
        "deploys or rolls back",
        r"\b(?:deployctl|argocd)\b[^\n;&|]*\s(?:revert|rollback|sync|deploy|set)\b|"
        r"\bansible-playbook\b(?![^\n;&|]*--check)|"
        r"\blauncher\s+rebuild\b",
    ),
    _change(
        "changes data",
        r"\bUPDATE\s+[\w.\"]+\s+SET\b|\bINSERT\s+INTO\b|\bALTER\s+(?:TABLE|SYSTEM|ROLE|USER|"
        r"DATABASE|INDEX|SEQUENCE|EXTENSION|PUBLICATION|SUBSCRIPTION|DEFAULT)\b|"
        r"\bCREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|ROLE|USER|EXTENSION|DATABASE|SCHEMA|VIEW|"
        r"PUBLICATION|SUBSCRIPTION|FUNCTION|OR\s+REPLACE|MATERIALIZED|SEQUENCE|TRIGGER|GROUP)\b|"
        r"\b(?:GRANT|REVOKE)\s+\w|\bVACUUM\b|\bREINDEX\b|\bANALYZE\s+(?:VERBOSE\s+)?[\w\"]|"
        r"\bCOPY\s+\S+\s+FROM\b|\bREFRESH\s+MATERIALIZED\b|\bCOMMENT\s+ON\b",
    ),
    _change(
        "changes data",
        r"\bpg_(?:reload_conf|drop_replication_slot|create_\w+|switch_(?:wal|xlog)|"
        r"wal_replay_(?:pause|resume)|stat_reset\w*|promote)\b|\bsetval\s*\(|"
        r"\bgitlab-pgrepack\b|\bpg_repack\b|\bgitlab-rake\s+gitlab:db:reindex\b",
    ),
    _change(
        "changes data",
        r"^\s*(?:[\w-]+=#\s*)?(?:PAUSE|RESUME|RELOAD|SHUTDOWN|DISABLE|ENABLE|RECONNECT|"
        r"SUSPEND)\b(?![\w-])",
        re.MULTILINE,
    ),
    _change("changes data", r"\bredis-cli\b[^\n;&|]*\sconfig\s+(?:set|rewrite|resetstat)\b"),
    _change(
        "changes data",
        r"\bpg_ctl\b[^\n;&|]*\s(?:promote|stop|restart|kill)\b|"
        r"\b(?:pg_basebackup|pg_restore|pg_rewind|vacuumdb|reindexdb|createdb|dropdb)\b",
    ),
    _change(
        "changes data",
        r"\b(?:SET|SETEX|SETNX|MSET|EXPIRE|DEL|UNLINK|LPUSH|RPUSH|LPOP|RPOP|LTRIM|HSET|HDEL|"
        r"SADD|SREM|ZADD|ZREM|ZREMRANGEBYSCORE|BGSAVE|BGREWRITEAOF|REPLICAOF|SLAVEOF)\s+\S"
        r"(?<!SET\s\w)|\bCONFIG\s+(?:SET|REWRITE|RESETSTAT)\b",
        0,
    ),
    _change(
        "changes data", r"\bredis-ttl-fix\b|\bpayctl\s+route\s+set\b|\bsbctl\s+(?:restore|set)\b"
    ),
    _change(
        "changes data",
        r"\.(?:save|update|update_column|update_attribute|destroy|delete|expunge)\b[(!]?"
        r"|\bgitlab-rails\s+runner\b(?![^\n]*(?:--dry-run|\bshow\b|/tmp/sq\.rb\s*$))",
        re.MULTILINE,
    ),
    _change(
        "changes the key-value store",
        rf"\betcdctl\b{_VERB}(?:put|defrag|compact(?:ion)?|promote|disarm|move-leader|"
        r"revoke)\b|\betcdctl\b[^\n;&|]*\smember\s+(?:add|remove|update|promote)\b|"
        r"\betcdutl\b[^\n;&|]*\s(?:snapshot\s+restore|defrag)\b|"
        r"\bconsul\s+(?:kv\s+put|leave|force-leave|maint|snapshot\s+restore|operator\s+raft\s+"
        r"remove-peer)\b|\bvault\s+(?:write|delete|kv\s+(?:put|delete|destroy)|operator\s+"
        r"(?:unseal|seal|step-down)|secrets\s+(?:enable|disable)|policy\s+write)\b",
    ),
    _change(
        "changes the cluster",
        rf"\b(?:gitlab-)?patronictl\b{_VERB}(?:restart|reload|pause|resume|edit-config|flush)\b",
    ),
    _change(
        "changes the storage cluster",
        r"\bceph\b[^\n;&|]*\s(?:osd\s+(?:out|in|down|rm|purge|destroy|reweight\S*|set|unset|"
        r"crush\s+\w+|pool\s+(?:set\S*|create|delete|rm|rename|application\s+enable))|"
        r"config\s+set|mgr\s+(?:module\s+(?:enable|disable)|fail)|crash\s+(?:archive\S*|rm)|"
        r"orch\s+(?:apply|rm|daemon\s+(?:restart|stop|start|redeploy)|host\s+(?:add|rm))|"
        r"fs\s+(?:fail|set|reset|new|rm)|tell\s+\S+\s+injectargs|pg\s+(?:repair|deep-scrub|"
        r"scrub)|health\s+(?:mute|unmute)|mon\s+(?:remove|add|rm)|auth\s+(?:del|caps|add|"
        r"get-or-create)|osd\s+blocklist\s+(?:add|rm))\b|"
        rf"\b(?:rbd|rados|radosgw-admin)\b{_VERB}(?:create|resize|map|unmap|"
        r"flatten|snap\s+(?:create|rm|rollback)|put|rmomapkey|setomapval|feature)\b|"
        r"\bodf\b[^\n;&|]*\sdelete\b",
    ),
    _change(
        "changes containers",
        rf"\b(?:docker-machine|docker|podman|crictl|ctr|nerdctl)\b{_VERB}(?:rm|stop|kill|restart|run|start|pull|"
        r"push|create|update|commit|pause|unpause)\b",
    ),
    _change(
        "changes a repository",
        rf"\bgit\b{_VERB}(?:push|commit|merge|rebase|reset|revert|cherry-pick|update-ref|"
        r"repack|gc|am|filter-branch|filter-repo)\b",
    ),
    _change(
        "changes a host",
        rf"{_AT_COMMAND}(?:mv|chmod|chown|chgrp|chattr|ln|dd|fdisk|parted|lvextend|pvresize|"
        r"xfs_growfs|resize2fs|growpart|swapoff|swapon|umount|ionice|renice|"
        r"update-ca-certificates|useradd|usermod|passwd|modprobe|setenforce)\s|"
        r"\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*/dev/|\brpm-ostree\s+(?:rebase|upgrade|deploy|rollback|"
        r"install|uninstall|override|kargs|reset|cleanup|apply-live)\b",
        re.I | re.M,
    ),
    _change(
        "changes a host",
        r"\b(?:apt-get|apt|yum|dnf|zypper)\s+(?:-\w+\s+)*(?:install|remove|purge|upgrade|update|"
        r"autoremove)\b|\bdpkg\s+-[iPr]\b|\bsed\b[^\n;&|]*\s-i|\bsysctl\s+(?:-w\s|\S+=)|"
        r"\biptables\s+(?:-t\s+\w+\s+)?-[AIDRFXNP]\b|\bip\s+(?:link|addr|route)\s+(?:set|add|del|"
        r"flush)\b|\btc\s+qdisc\s+(?:add|del|change|replace)\b",
    ),
    _change(
        "changes a host",
        rf"(?:>>?|\btee\s+(?:-a\s+)?)\s*['\"]?{_SYSTEM_PATH}|"
        rf"\b(?:cp|mkdir|touch|install)\s+(?:-\S+\s+)*(?:\S+\s+)*?['\"]?{_SYSTEM_PATH}[^\s;&|]*"
        r"\s*(?:$|[;&|])",
        re.MULTILINE,
    ),
    _change(
        "changes a host",
        r"\b(?:systemctl|service|gitlab-ctl)\s+(?:\S+\s+)?(?:start|reload|reconfigure|reconfigue|"
        r"hup|term|enable|disable|mask|unmask|daemon-reload|try-restart|deploy-page|"
        rf"reload-or-restart)\b|{_AT_COMMAND}(?:[\w./-]*/)?chef-client(?:-enable|-disable)?\b"
        r"(?![^\n;&|]*(?:--why-run|-W\b))"
        r"|\bnginx\s+-s\s+(?:reload|stop|quit)\b|\bovn-appctl\b[^\n;&|]*\sexit\b",
        re.I | re.M,
    ),
    _change(
        "changes a host",
        r"--wet-run\b|\betcd\s+--|\bpraefect\b[^\n;&|]*\s(?:reconcile|accept-dataloss|"
        r"remove-repository|set-replication-factor)\b",
    ),
    _change(
        "changes a cloud resource",
        r"\bgcloud\b[^\n;&|]*\s(?:create|delete|update|resize|reset\S*|start|stop|patch|import|"
        r"export|deploy|promote|failover|restart|rollback|upgrade|attach\S*|detach\S*|move|restore|"
        r"enable|disable|add-\S+|remove-\S+|set-\S+|recreate-instances|rolling-action|"
        r"abandon-instances|suspend|resume|seek|snapshot)\b",
    ),
    _change(
        "changes a cloud resource",
        r"\baws\b[^\n;&|]*\ss3\s+(?:rm|mv|rb|mb)\b|\b(?:npm|gem|pip3?)\s+install\b|"
        r"\bbq\b(?:[^\n;&|]|\\\n)*?\s(?:load|rm|mk|insert|cp|update)\b|"
        r"\bknife\b(?:\s+[\w-]+){0,2}?\s+(?:from|edit|create|upload|add|remove|bootstrap|set)\b|"
        r"\baws\s+\S+\s+(?:create|delete|update|put|modify|reboot|start|stop|terminate|"
        r"failover|restore|attach|detach|associate|disassociate|register|deregister|promote|"
        r"reset|invoke|enable|disable|tag|untag|revoke|authorize|upload)-\S+|"
        r"\baws\s+s3\s+(?:cp|mv|sync)\s+\S+\s+s3://|\bgsutil\b[^\n;&|]*\s(?:mv|rsync|setmeta|"
        r"acl\s+(?:set|ch)|iam\s+(?:set|ch)|lifecycle\s+set|mb|rb)\b|\bgsutil\b[^\n;&|]*\scp\s[^\n;&|]*"
        r"\sgs://\S+\s*$|\b(?:terraform|tf)\s+(?:apply|destroy|import|state\s+(?:rm|mv)|taint|"
        r"force-unlock)\b|\b(?:fastly|stripe|gh)\b[^\n;&|]*\s(?:purge|activate|clone|resend|"
        r"disable|enable)\b|\bpd\s+incident\s+create\b|\btctl\s+request\s+approve\b",
        re.IGNORECASE | re.MULTILINE,
    ),
    _change(
        "sends a write request",
        rf"\bcurl\b{_SPAN}(?:\s-X\s*['\"]?|\s--request[ =]['\"]?)(?:POST|PUT|DELETE|PATCH)\b|"
        rf"\bcurl\b(?!{_SPAN}\s-G\b){_SPAN}\s(?:-d|--data(?:-\w+)?|-F|--form|-T|"
        r"--upload-file)\s",
        0,
    ),
    _change(
        "changes a virtual machine",
        r"\bvirtctl\s+(?:start|stop|restart|migrate|pause|unpause|soft-reboot|addvolume|"
        r"removevolume|image-upload)\b",
    ),
    _change(
        "changes alerting",
        r"\bamtool\b[^\n;&|]*\s(?:silence\s+(?:add|expire|import)|alert\s+add)\b|"
        r"\b(?:cortextool|mimirtool)\s+rules\s+(?:load|sync|delete)\b",
    ),
    _change(
        "changes a topic or group",
        r"\bkafka-(?:topics|configs|consumer-groups)\b[^\n;&|]*\s--(?:delete|create|alter|"
        r"delete-offsets)\b",
    ),
    _change(
        "changes a host",
        rf"\bwal-[eg]\b{_SPAN}\s(?:backup-fetch|backup-push|delete)\b|"
        rf"\b[\w-]*ctl\b{_VERB}(?:reset|override|restart|stop|start|disable|enable|drain|promote|"
        r"revert|kill)\b",
    ),
    _change("runs a migration", r"\bmanage\.py\s+migrate\b|\bassets:precompile\b"),
)

STATE_CHANGES: tuple[StateChange, ...] = _WORST + _OTHERS
