"""Extract every shell and SQL command of the public collections and the demo corpus.

One row per fenced command block (``bash``, ``sh``, ``shell``, ``console``, ``sql``, … or an
unlabelled block that reads as commands) and per inline code span that is a command (a known
program with arguments, or an SQL statement), with its source file. YAML, JSON, Ruby and other
configuration or program text is out of scope: it is not a command an on-call pastes into a
shell. ``python -m evals.state_changes.extract > commands.jsonl`` prints the rows as JSON Lines,
in a stable order, without labels (``label.py`` adds them).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
# The public collections (evals/external asks questions over prometheus-operator, which is here).
FOLDERS = ("evals/collections", "corpus")

SHELL_INFO = frozenset(
    "bash sh shell console shell-session shellsession zsh terminal sql psql pgsql postgresql "
    "postgres mysql".split()
)
UNLABELLED_INFO = frozenset({"", "text", "plaintext", "plain", "none"})
# A prompt before a command: "$ kubectl …", "# systemctl …", "gitlab=# SELECT …", and zsh's
# bare "~ kubectl …" (the home directory as the whole prompt).
_PROMPT = re.compile(r"^\s*(?:\[[^\]]*\][$#]|[\w@:~/.-]*[$#>]|[\w-]+=[#>]|~)\s+")
_SQL = re.compile(
    r"^\s*(?:SELECT|UPDATE|DELETE|INSERT|ALTER|DROP|TRUNCATE|CREATE|VACUUM|ANALYZE|REINDEX|"
    r"GRANT|REVOKE|CLUSTER|SET|SHOW|EXPLAIN|WITH|BEGIN|COMMIT|CALL)\b",
)
# Programs an inline span can start with to count as a command (read from the collections'
# command blocks and runbooks; a span such as `ledger` or `/var/log` is a name, not a command).
PROGRAMS = frozenset(
    """kubectl oc helm git gitlab-ctl gitlab-rake gitlab-rails gitlab-psql gitlab-patronictl
    gitlab-redis-cli gitlab-backup gitlab-runner patronictl psql pg_ctl pg_basebackup pg_dump
    pg_restore pgbouncer systemctl service journalctl docker podman crictl ctr etcdctl etcdutl
    consul vault terraform gcloud gsutil aws az ibmcloud ic redis-cli curl wget ssh scp rsync
    knife chef-client chef rm mv cp mkdir chmod chown ln tar cat less tail head grep egrep
    zgrep awk sed jq yq find ls du df free top htop ps kill pkill killall lsof netstat ss
    dig nslookup host ping traceroute mtr openssl istioctl ceph rados rbd radosgw-admin cephadm
    rook promtool amtool cortextool mimirtool thanos sbctl redis-prune kafka-consumer-groups
    kafka-topics kafka-configs mount umount fdisk lsblk blkid xfs_growfs resize2fs
    truncate reboot shutdown sysctl iptables ip tc nc telnet ipvsadm dmesg uptime vmstat
    iostat sar perf strace gdb watch sudo nsenter chroot crontab virtctl velero argocd
    flux kustomize make python python3 bundle ruby rails rake bin/rails bin/rake node npm
    go tsh teleport ansible ansible-playbook salt pdsh parallel xargs export unset env
    echo printf source dd mkfs lvextend pvresize update-ca-certificates certbot
    step cfssl nginx haproxy envoy openvpn wg swapoff swapon sync chattr logrotate
    oc-mirror skopeo podman-remote buildah coreos-installer rpm-ostree yum dnf apt apt-get
    pip pip3 sqlite3 mysql mongosh mongo""".split()
)


def _fences_and_spans(tokens: list[Token]) -> Iterator[tuple[str, str, int]]:
    """("fence" | "inline", text, line) for each fenced block and inline code span."""
    for token in tokens:
        if token.type in ("fence", "code_block"):
            info = token.info.strip().split(maxsplit=1)[0].lower() if token.info.strip() else ""
            line = token.map[0] + 1 if token.map else 0
            yield f"fence:{info}", token.content.rstrip("\n"), line
        elif token.type == "inline" and token.children:
            line = token.map[0] + 1 if token.map else 0
            for child in token.children:
                if child.type == "code_inline":
                    yield "inline", child.content, line


def _first_word(line: str) -> str:
    line = _PROMPT.sub("", line, count=1)
    words = line.split()
    while words and (words[0] in ("sudo", "time", "nohup", "exec") or "=" in words[0]):
        words = words[1:]
        if words and words[0].startswith("-"):
            words = words[1:]
    return words[0] if words else ""


def is_command_block(info: str, body: str) -> bool:
    """Whether a fenced block holds shell or SQL commands."""
    if info in SHELL_INFO:
        return bool(body.strip())
    if info not in UNLABELLED_INFO:
        return False
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return False
    first = lines[0]
    return _first_word(first) in PROGRAMS or _SQL.match(first) is not None


def is_inline_command(text: str) -> bool:
    """Whether an inline code span is a command: a known program with arguments, or SQL."""
    text = text.strip()
    if len(text.split()) < 2:
        return False
    if _SQL.match(text) and len(text.split()) >= 3:
        return True
    return _first_word(text) in PROGRAMS


def extract(root: Path = ROOT) -> list[dict[str, object]]:
    parser = MarkdownIt("commonmark")
    rows: list[dict[str, object]] = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.md")):
            tokens = parser.parse(path.read_text(encoding="utf-8"))
            source = path.relative_to(root).as_posix()
            for kind, text, line in _fences_and_spans(tokens):
                if kind == "inline":
                    keep, info = is_inline_command(text), ""
                else:
                    info = kind.removeprefix("fence:")
                    keep = is_command_block(info, text)
                if keep:
                    rows.append(
                        {
                            "kind": "block" if kind != "inline" else "inline",
                            "source": source,
                            "line": line,
                            "info": info,
                            "command": text,
                        }
                    )
    return rows


def main() -> int:
    for row in extract():
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
