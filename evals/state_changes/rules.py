"""Hand-written labelling rules: does running a command change state, or only read?

**changes-state**: running it changes something beyond the operator's own terminal session — a
cluster object, a host (services, processes, packages, files outside ``/tmp``), a database, a
queue or cache, a remote repository, a cloud resource. **reads-only**: it prints, queries,
inspects, captures to a local or ``/tmp`` file, or changes only the operator's session or
working copy (``cd``, ``export``, ``git clone/fetch/checkout``, ``kubectl config use-context``,
``port-forward``, ``login``).

These rules are not the detector (``rag.state_changes``): they parse each command (prompts,
``sudo``, pipes, ``&&``, ``;``, ``$(…)``, wrappers such as ``ssh HOST CMD``, ``knife ssh Q CMD``,
``kubectl exec … -- CMD``, ``psql -c SQL``) and look up the program's verb in a table written
from the programs' documentation. A command they cannot place is ``None`` and is labelled by
reading it (``overrides.jsonl``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

CHANGES, READS = "changes-state", "reads-only"

# Reading programs: they never change state on their own (redirects are checked apart).
READ_PROGRAMS = frozenset(
    """cat less more tail head grep egrep fgrep zgrep zcat awk jq yq ls du df free top htop ps
    lsof netstat ss dig nslookup host ping traceroute mtr echo printf export unset env cd pwd
    date whoami id uname hostname uptime vmstat iostat sar perf strace dmesg journalctl lsblk
    blkid wc sort uniq cut tr column base64 md5sum sha256sum sha1sum wget nc telnet which type
    file stat readlink realpath history tree diff cmp getent nproc lscpu lsmod iotop pidstat
    mpstat tcpdump sleep true false exit clear test source . tee wait read seq let local
    openssl gpg kubectx kubens watch time timeout nohup xargs sudo su exec node-exporter
    pstree free findmnt mountpoint smartctl nvme lspci lsusb ethtool arp route curlie http
    host dog drill whois nmap iftop nethogs bmon atop glances ncdu fio sysbench gdb pmap
    pgrep pidof ldd objdump strings hexdump xxd od zless bzcat xzcat gunzip gzip tar unzip
    python3 jq yq gsutil_ls kubeval promtool amtool-check less view vim vi nano emacs
    set shopt alias trap ulimit systemd-analyze systemd-cgls systemd-cgtop timedatectl
    chronyc ntpq ntpstat hwclock lscpu numactl numastat nvidia-smi iperf iperf3 ab hey
    openssl s_client ssh-keygen ssh-keyscan certutil keytool cfssl step dnsperf ipcs
    mongostat mongotop redis-benchmark pg_dump pg_dumpall pg_controldata pg_waldump
    pg_isready pg_lsclusters pg_config pg_test_fsync dpkg-query apt-cache rpm-q
    kubelogin docker-credential-gcr krew""".split()
)

# Programs that change state whatever their arguments.
CHANGE_PROGRAMS = frozenset(
    """rm rmdir mv chmod chown chgrp chattr ln truncate dd shred mkfs mkfs.ext4 mkfs.xfs fdisk
    parted sgdisk wipefs lvextend lvcreate lvremove lvresize pvresize pvcreate vgextend
    xfs_growfs resize2fs growpart kill pkill killall reboot shutdown poweroff halt swapoff
    swapon umount update-ca-certificates certbot chef-client chef-client-enable
    chef-client-disable gitlab-pgrepack pg_repack pg_basebackup pg_restore pg_rewind
    pg_resetwal pg_upgrade useradd userdel usermod groupadd passwd chpasswd
    visudo setenforce restorecon semanage modprobe rmmod insmod ifdown ifup nmcli
    update-alternatives ldconfig fstrim blockdev tune2fs e2fsck xfs_repair fsck
    mkswap sfdisk createdb dropdb createuser dropuser reindexdb vacuumdb
    clusterdb pg_ctlcluster pg_createcluster pg_dropcluster""".split()
)

# Per program: the verbs (any non-flag word of the command) that change state, and those that
# read; the first verb found decides, change verbs first.
_VERB_TABLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {}


def _verbs(programs: str, changes: str, reads: str) -> None:
    entry = (frozenset(changes.split()), frozenset(reads.split()))
    for program in programs.split():
        _VERB_TABLES[program] = entry


_verbs(
    "kubectl oc",
    """apply create delete patch edit replace scale annotate label taint cordon uncordon drain
    expose autoscale run new-app new-project start-build cancel-build import-image tag
    set approve deny restart undo pause resume rollback abort promote retry evict adopt
    upgrade rsync""",
    """get describe logs log top explain dev_tool audit attach get-token api-resources api-versions version cluster-info auth
    can-i whoami view get-contexts current-context use-context wait diff port-forward proxy
    inspect must-gather node-logs status history exec rsh debug login project projects
    extract process observe completion plugin events list show-context config-view
    kustomize krew info""",
)
_verbs(
    "git",
    """push commit merge rebase reset revert cherry-pick am apply stash gc filter-branch
    filter-repo update-ref prune replace notes""",
    """log show diff status fetch clone checkout switch blame grep rev-parse ls-files ls-tree
    ls-remote remote describe shortlog branch config pull cat-file count-objects fsck
    for-each-ref rev-list verify-pack reflog init sparse-checkout worktree submodule bisect
    archive bundle format-patch""",
)
_verbs(
    "systemctl service",
    """stop start restart reload kill enable disable mask unmask daemon-reload reset-failed
    try-restart reload-or-restart isolate set-property edit""",
    "status show list-units list-unit-files is-active is-enabled is-failed cat list-timers "
    "list-dependencies list-sockets --failed",
)
_verbs(
    "gitlab-ctl",
    """stop start restart reconfigure hup kill term int usr1 usr2 once deploy-page
    pg-upgrade revert-pg-upgrade cleanse uninstall set-grafana-password renew-le-certs
    graceful-kill remove-accounts registry-garbage-collect backup-etc upgrade
    patroni repmgr geo promote-to-primary-node""",
    "status tail show-config service-list diff-config --help help get-redis-master "
    "get-postgresql-primary",
)
_verbs(
    "docker podman crictl ctr nerdctl",
    """rm rmi rmp stop stopp kill restart run start pull push prune create update tag commit
    load import cp pause unpause rename attach""",
    "ps images inspect logs stats top info version pods inspectp inspecti imagefsinfo "
    "history port diff events search volume network container image exec",
)
_verbs(
    "etcdctl etcdutl",
    """put del defrag compact compaction add remove update promote disarm restore move-leader
    revoke grant enable disable txn lock elect migrate""",
    "get endpoint health status member list alarm check version lease timetolive watch "
    "snapshot save hashkv leases",
)
_verbs(
    "consul",
    "put delete leave force-leave remove-peer maint reload restore import transfer-leader "
    "deregister register",
    "get members catalog info list-peers monitor version save export watch services nodes "
    "datacenters",
)
_verbs(
    "vault",
    "write delete put unseal seal step-down revoke enable disable tune rotate destroy "
    "undelete rollback patch",
    "read list status get lookup version login capabilities print",
)
_verbs(
    "patronictl gitlab-patronictl",
    "failover switchover reinit remove restart reload pause resume edit-config flush",
    "list topology history show-config version dsn query",
)
_verbs(
    "helm",
    "install upgrade rollback uninstall delete",
    "list ls status history get show template search repo version lint diff dependency "
    "pull plugin env",
)
_verbs(
    "istioctl",
    "install upgrade uninstall set tag manifest-apply",
    "analyze tls-check proxy-status proxy-config version describe dashboard bug-report precheck "
    "kube-inject verify-install ps pc x experimental authz",
)
_verbs(
    "amtool",
    "add expire import",
    "query check-config check-routes routes config template",
)
_verbs("promtool", "", "check query test tsdb debug")
_verbs(
    "cortextool mimirtool",
    "load sync delete remove",
    "list print lint check diff prepare analyse analyze",
)
_verbs(
    "terraform",
    "apply destroy import rm mv taint untaint force-unlock push",
    "plan show list output validate fmt init graph providers version workspace state",
)
_verbs(
    "virtctl",
    """start stop restart migrate pause unpause soft-reboot expose addvolume removevolume
    image-upload memory-dump migrate-cancel""",
    "console vnc ssh scp guestosinfo fslist userlist version port-forward credentials",
)
_verbs(
    "ceph rados rbd radosgw-admin cephadm",
    """out in down rm purge destroy reweight reweight-by-utilization set unset create delete
    enable disable archive archive-all del caps add apply restart fail reset repair
    deep-scrub scrub mute unmute injectargs remove redeploy stop start import new lost
    mark_unfound_lost put rmsnap map unmap resize flatten rollback unprotect protect
    rmomapkey setomapval trash mv cp import-diff blocklist blacklist kick evict rmfailed
    setval bootstrap adopt rm-cluster zap prepare activate force-create-pg
    force-recovery force-backfill max_mds repair_dirfrag""",
    """status -s health df tree dump ls stat query lspools utilization mon_status ops children dump_ops_in_flight dump_blocked_ops dump_historic_ops get versions ps show info last services
    detail perf safe-to-destroy ok-to-stop list du listomapkeys listomapvals getxattr
    check sessions metadata config-key stats inventory device blocked versions
    perf_dump damage scrub_path""",
)
_verbs(
    "knife",
    "edit delete create upload from bulk add remove run_list set bootstrap",
    "show list search status node role environment data cookbook exec ssh",
)
_verbs(
    "gcloud",
    """create delete update set resize reset start stop patch import deploy promote failover upgrade
    restart rollback attach detach move restore enable disable add-iam-policy-binding
    remove-iam-policy-binding add-access-config delete-access-config recreate-instances
    rolling-action abandon-instances suspend resume add-metadata remove-metadata
    add-labels remove-labels add-tags remove-tags set-iam-policy rotate clone
    add-backend remove-backend set-backend-service add-instances remove-instances
    deploy-vm upgrade drain switch""",
    """list describe get-iam-policy info auth get get-credentials ssh sign-url read
    get-value print-access-token get-server-config tail list-instances versions
    print-identity-token""",
)
_verbs(
    "gsutil",
    "rm mv rsync setmeta acl iam lifecycle versioning retention defacl mb rb",
    "ls cat du stat hash version signurl --help config",
)
_verbs(
    "tsh",
    "",
    "login ls status logout apps db kube request",
)
_verbs(
    "pg_ctl pg_ctlcluster",
    "start stop restart promote reload kill init initdb",
    "status",
)
_verbs(
    "wal-g wal-e",
    "backup-push delete backup-fetch wal-push catchup-push",
    "backup-list wal-show wal-verify wal-fetch st",
)
_verbs(
    "kafka-consumer-groups kafka-topics kafka-configs",
    "--delete --create --alter --execute --delete-offsets --add-config --delete-config",
    "--describe --list",
)
_verbs(
    "aws",
    "create delete update put modify reboot start stop terminate failover restore attach "
    "detach associate disassociate register deregister promote reset set cp mv rm sync "
    "invoke enable disable tag untag revoke authorize",
    "describe list get ls wait help",
)
_verbs(
    "az",
    "create delete update set start stop restart deallocate failover restore add remove reset",
    "show list get generate",
)
_verbs("bq", "rm mk load insert cp update", "query ls show head")
_verbs(
    "argocd",
    "sync rollback delete set create terminate-op",
    "get list app diff history logs version login",
)
_verbs("thanos", "", "tools query")
_verbs(
    "praefect",
    "remove-repository track-repository set-replication-factor accept-dataloss",
    "dataloss check list-untracked-repositories verify sql-ping",
)
_verbs(
    "docker-machine",
    "create rm kill stop start restart upgrade regenerate-certs provision",
    "ls ssh inspect status ip env config url version scp",
)
_verbs("tc", "add del delete change replace", "show ls list")
_verbs("scp rsync", "", "")
_verbs("go", "", "tool pprof version env")
_verbs(
    "tf",
    "apply destroy import rm mv taint untaint force-unlock",
    "plan show list output validate fmt init graph providers version workspace state",
)
_verbs("sbctl", "kill drain set unset enable disable cutover restore", "status list ls get show")
_verbs("odf", "delete", "ls")
_verbs("ocm", "", "list backplane tunnel login")
_verbs("deployctl", "revert rollback deploy promote", "status")
_verbs("payctl", "set", "show")
_verbs("stripe", "resend create delete update", "list retrieve")
_verbs("fastly", "purge activate clone update create delete", "list describe")
_verbs("gh", "disable enable run create delete merge", "list view status")
_verbs("cmctl", "renew approve deny", "status inspect check")
_verbs("ovn-appctl ovs-appctl", "exit", "status cluster/status connection-status show")
_verbs("tctl", "approve deny rm create", "status ls get")
_verbs("pd", "create resolve ack", "list oncall")
_verbs(
    "apt apt-get yum dnf zypper snap",
    "install remove purge upgrade update autoremove dist-upgrade reinstall downgrade",
    "list search show policy info",
)
_verbs("pip pip3 gem npm", "install uninstall", "list show freeze")
_verbs("dpkg rpm", "-i --install -r --remove -P --purge -U -e", "-l -L -s -q -qa --list")
_verbs("nginx haproxy", "reload stop quit reopen", "-t -T -c -v -V")
_verbs(
    "crontab",
    "-e -r",
    "-l",
)
_verbs(
    "kubectl-argo-rollouts",
    "abort promote undo retry restart set pause",
    "get history status list version",
)

_SQL_CHANGES = re.compile(
    r"\b(?:UPDATE\s+\S+\s+SET|DELETE\s+FROM|INSERT\s+INTO|ALTER\s+(?:TABLE|SYSTEM|ROLE|USER|"
    r"DATABASE|INDEX|SEQUENCE|EXTENSION|PUBLICATION|SUBSCRIPTION|DEFAULT)|DROP\s+\w+|TRUNCATE|"
    r"CREATE\s+\w+|GRANT\s|REVOKE\s|VACUUM|REINDEX|CLUSTER\s|ANALYZE\s+\w|COPY\s+\S+\s+FROM|"
    r"pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_drop_replication_slot|"
    r"pg_create_\w+|pg_switch_wal|pg_switch_xlog|pg_wal_replay_(?:pause|resume)|setval|"
    r"pg_stat_reset\w*|pg_promote|pg_rotate_logfile|COMMENT\s+ON|REFRESH\s+MATERIALIZED|"
    r"SELECT\s+.*\bINTO\s+\w|pg_advisory_unlock\w*|lo_unlink|"
    r"(?:^|;)\s*(?:PAUSE|RESUME|KILL|RELOAD|SHUTDOWN|DISABLE|ENABLE|RECONNECT|SUSPEND)\b)",
    re.IGNORECASE | re.DOTALL,
)
_SQL_START = re.compile(
    r"^\s*(?:(?i:SELECT|UPDATE|DELETE|INSERT|ALTER|DROP|TRUNCATE|CREATE|VACUUM|REINDEX|GRANT|"
    r"REVOKE|EXPLAIN|BEGIN|COMMIT)(?:\s|$)|(?i:show)\s+\w+;|(?:ANALYZE|CLUSTER|SET|SHOW|WITH|ROLLBACK|CALL|TABLE|COPY|"
    r"PAUSE|RESUME|KILL|RELOAD)\b|\\[a-z]+\b)"
)
_REDIS_CHANGES = frozenset(
    """del unlink flushall flushdb set setex setnx mset expire pexpire persist lpush rpush
    lpop rpop ltrim lrem sadd srem zadd zrem zremrangebyscore zremrangebyrank hset hdel
    hmset incr decr incrby rename shutdown failover replicaof slaveof bgsave bgrewriteaof
    save debug migrate restore""".split()
)
_REDIS_CONFIG = re.compile(
    r"\b(?:config\s+(?:set|rewrite|resetstat)|client\s+(?:kill|pause)|"
    r"script\s+flush|acl\s+(?:setuser|deluser)|cluster\s+(?:failover|"
    r"reset|forget|meet|addslots|delslots|setslot))\b",
    re.I,
)

# Prompts: "$ ", "# ", "user@host:~$ ", "[root@x ~]# ", "gitlabhq_production=# ", "> ".
_PROMPT = re.compile(r"^\s*(?:\[[^\]]*\]\s?[$#]|[\w@:~/.()-]*[$#]|[\w-]+=[#>]|>)\s+")
_SPLIT = re.compile(r"\|\||&&|[|;&]|\$\(|`|\bdo\b|\bthen\b|\belse\b|\)")
_WORD = re.compile(r"^[A-Za-z0-9_./-]+$")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_REDIRECT = re.compile(r"(?<![<>&0-9])(?:>>?|\btee\s+(?:-a\s+)?)\s*([^\s;|&]+)")
_SHELL_WORDS = frozenset(
    "for while until if fi done esac case do then else elif function { } ( ) [ [[ ! in".split()
)


def label_command(text: str, *, sql: bool = False) -> tuple[str | None, str]:
    """(label, why) for one command block or inline command; (None, why) when no rule places
    some line of it, for a person to read."""
    lines = _command_lines(text, sql=sql)
    if not lines:
        return READS, "no command: output or comments only"
    whys: list[str] = []
    unknown: list[str] = []
    for line in lines:
        label, why = _label_line(line, sql=sql)
        if label == CHANGES:
            return CHANGES, why
        if label is None:
            unknown.append(why)
        else:
            whys.append(why)
    if unknown:
        return None, "; ".join(unknown)
    return READS, "; ".join(dict.fromkeys(whys))


def _command_lines(text: str, *, sql: bool) -> list[str]:
    """The lines that are commands: prompted lines when the block shows prompts (the rest is
    output), else every line but comments, heredoc bodies and output; continuations and
    quoted strings over several lines joined; an SQL statement read up to its semicolon."""
    raw = _joined_lines(text)
    prompted = [
        ln
        for ln in raw
        if _PROMPTED.match(ln)
        or ln.lstrip().startswith("# ")
        and ln.split()[1:2]
        and _program(ln.split()[1]) in _known_programs()
    ]
    if not any(_PROMPTED.match(ln) for ln in raw):
        prompted = []
    if prompted:
        raw = prompted
    lines: list[str] = []
    heredoc: str | None = None
    statement: list[str] = []
    for line in raw:
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#!"):
            continue
        if statement:
            statement.append(stripped)
            if stripped.rstrip().endswith(";"):
                lines.append("SQL: " + " ".join(statement))
                statement = []
            continue
        if stripped.startswith(("#", "--")) and not prompted:
            after = stripped.lstrip("#").strip()
            if stripped.startswith("--") or not after:
                continue
            if _program(after.split()[0]) not in _known_programs():
                continue  # a comment
            stripped = after
        bare = _PROMPT.sub("", stripped, count=1) if prompted else stripped
        if sql or _SQL_START.match(bare):
            statement.append(bare)
            if bare.rstrip().endswith(";") or prompted:
                lines.append("SQL: " + " ".join(statement))
                statement = []
            continue
        if stripped.startswith("> ") and (redis := stripped[2:].split()) and redis[0].isupper():
            lines.append("redis-cli " + stripped[2:])
            continue
        if not prompted and _OUTPUT.match(bare) and not _ASSIGNMENT.match(bare):
            continue  # output shown after the command
        if (opened := _HEREDOC.search(stripped)) is not None:
            heredoc = opened.group(1)
        lines.append(stripped)
    if statement:
        lines.append("SQL: " + " ".join(statement))
    return lines


# A line that starts like no command: a number, a table border, "NAME", "Key:", "id:", "* …".
_OUTPUT = re.compile(
    r"^(?:[^a-z./$~\\[(<]|[a-z_:]+\s*[({\[]|[a-z][\w-]*:(?:\s|$)|\S+\s{3,}|(?:sum|avg|max|min|count|rate|irate|topk|bottomk|histogram_quantile|label_replace|increase|and|or|on|by|without|unless|ignoring|group_left|group_right)\b)"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PROMPTED = re.compile(r"^\s*(?:\$|[\w@:~/.()-]+[$#]|\[[^\]]+\][$#]|[\w-]+=#)\s")


def _joined_lines(text: str) -> list[str]:
    """Lines with backslash continuations and quotes left open joined to the next line."""
    lines: list[str] = []
    buffer = ""
    for line in text.split("\n"):
        buffer = f"{buffer} {line.strip()}" if buffer else line
        if buffer.rstrip().endswith("\\"):
            buffer = buffer.rstrip()[:-1]
            continue
        code = re.sub(r"(?:^|\s)#\s.*$", "", buffer)
        if (code.count("'") % 2 or code.count('"') % 2) and len(buffer) < 4000:
            continue
        lines.append(buffer)
        buffer = ""
    if buffer:
        lines.append(buffer)
    return lines


def _known_programs() -> frozenset[str]:
    return READ_PROGRAMS | CHANGE_PROGRAMS | frozenset(_VERB_TABLES) | _WRAPPERS | _SPECIAL


_WRAPPERS = frozenset(
    "ssh knife tsh ansible pdsh sudo chroot bash sh zsh nsenter watch xargs env time "
    "timeout nohup".split()
)
_SPECIAL = frozenset(
    "curl redis-cli gitlab-redis-cli psql gitlab-psql mysql find sed sysctl iptables ip "
    "mount mkdir touch cp redis-prune gitlab-rake gitlab-rails".split()
)


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _label_line(line: str, *, sql: bool) -> tuple[str | None, str]:
    if line.startswith("SQL: "):
        return _label_sql(line[5:])
    line = _PROMPT.sub("", line, count=1)
    if _SQL_START.match(line) and not sql:
        return _label_sql(line)
    if (label := _redirect_changes(line)) is not None:
        return label
    # psql/gitlab-psql -c "SQL": the SQL decides.
    if (psql := re.search(r"\b(?:gitlab-)?psql\b.*?\s-c\s+(['\"])(.*?)\1", line)) is not None:
        label, why = _label_sql(psql.group(2))
        if label == CHANGES:
            return label, why
    results: list[tuple[str | None, str]] = []
    for segment in _segments(line):
        results.append(_label_segment(segment))
    for label, why in results:
        if label == CHANGES:
            return label, why
    unknown = [why for label, why in results if label is None]
    if unknown:
        return None, "; ".join(unknown)
    return READS, "; ".join(why for _, why in results) or "shell syntax only"


def _redirect_changes(line: str) -> tuple[str, str] | None:
    # Quoted text and <placeholders> hold no redirect ("perl -pe 's/.* -> //'", "~<user>/x").
    line = re.sub(r"'[^']*'|\"[^\"]*\"|<[^<>\s]*(?:\s[^<>]*)?>", "", line)
    for match in _REDIRECT.finditer(line):
        target = match.group(1).strip("'\"")
        if target.startswith("/") and not target.startswith(("/tmp", "/dev/", "/var/tmp")):
            return CHANGES, f"writes {target}"
    return None


def _segments(line: str) -> Iterable[str]:
    """The simple commands of a line: split at pipes, ``&&``, ``||``, ``;`` and ``&`` outside
    quotes; each ``$(…)`` substitution is a command of its own."""
    for groups in _SUBSTITUTION.findall(line):
        for inner in groups:
            if inner:
                yield from _segments(inner)
    line = _SUBSTITUTION.sub("X", line)
    part: list[str] = []
    quote = ""
    for char in line:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "|;&":
            yield from _clean(part)
            part = []
            continue
        part.append(char)
    yield from _clean(part)


_SUBSTITUTION = re.compile(r"\$\(((?:[^()]|\([^()]*\))*)\)|`([^`]*)`")


def _clean(part: list[str]) -> Iterable[str]:
    text = "".join(part).strip().strip("(){}").strip()
    for keyword in ("do ", "then ", "else ", "! "):
        if text.startswith(keyword):
            text = text[len(keyword) :].strip()
    if text:
        yield text


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=False)
    except ValueError:
        return segment.split()


def _label_segment(segment: str) -> tuple[str | None, str]:
    words = _words(segment)
    while words and words[0] == "<" and len(words) > 1:
        words = words[2:]  # an input redirect before the command
    while words and words[0].startswith("<") and len(words[0]) > 1 and words[0][1] != "<":
        words = words[1:]
    # Prefixes that run what follows: sudo [-u U] [-i], env, VAR=value, time, nohup, watch -n N.
    while words:
        head = _program(words[0])
        if "=" in words[0] and not words[0].startswith("-") and head not in _known_programs():
            words = words[1:]
        elif head in ("sudo", "env", "time", "nohup", "exec", "command", "builtin"):
            words = words[1:]
            while words and words[0].startswith("-"):
                flag = words.pop(0)
                if flag in ("-u", "-g", "-n", "-s") and words and not words[0].startswith("-"):
                    words.pop(0)
        elif head in ("watch", "timeout"):
            words = words[1:]
            while words and (words[0].startswith("-") or words[0].rstrip("smh").isdigit()):
                words.pop(0)
        elif head == "xargs":
            words = words[1:]
            while words and words[0].startswith("-"):
                flag = words.pop(0)
                if flag in ("-I", "-n", "-P", "-L", "-d") and words:
                    words.pop(0)
        else:
            break
    if not words:
        return READS, "shell syntax"
    head = _program(words[0])
    if head in _SHELL_WORDS or head.startswith(("$", "<", "{")) or head in ("done", "fi", "esac"):
        return READS, "shell syntax"
    if head.endswith("=") or "=" in head and head.split("=")[0].isidentifier():
        return READS, "sets a shell variable"
    rest = words[1:]
    inner = _inner_command(head, rest)
    if inner is not None:
        label, why = _label_line(inner, sql=False) if inner.strip() else (READS, "opens a shell")
        return label, f"{head} → {why}"
    if head == "ansible-playbook":
        return (READS, "ansible-playbook --check") if "--check" in rest else (CHANGES, head)
    if head == "chef-client" and ("--why-run" in rest or "-W" in rest):
        return READS, "chef-client --why-run (a dry run)"
    if head in CHANGE_PROGRAMS:
        return CHANGES, f"{head}"
    special = _special(head, rest, segment)
    if special is not None:
        return special
    if head in _VERB_TABLES:
        changes, reads = _VERB_TABLES[head]
        verbs = [w for w in rest if not w.startswith("-") or w in changes or w in reads]
        # kubectl argo rollouts VERB: the plugin's own table.
        if head in ("kubectl", "oc") and rest[:2] == ["argo", "rollouts"]:
            changes, reads = _VERB_TABLES["kubectl-argo-rollouts"]
            verbs = rest[2:]
        words = [
            verb.split("-")[0] if "-" in verb.strip("-") and not verb.startswith("-") else verb
            for verb in verbs
        ]
        # A change verb among the first words wins (``etcdctl member promote``, ``knife node
        # delete``); else the first read verb; resource names come later and decide nothing.
        for verb in words[:4]:
            if verb in changes:
                return CHANGES, f"{head} {verb}"
        for verb in words:
            if verb in reads:
                return READS, f"{head} {verb}"
        for verb in words:
            if verb in changes:
                return CHANGES, f"{head} {verb}"
        return None, f"{head}: no verb in the table ({' '.join(rest[:4])})"
    if head in READ_PROGRAMS:
        if head == "sed" or head == "find":
            pass
        else:
            return READS, head
    return None, f"unknown program {head!r}"


def _inner_command(head: str, rest: list[str]) -> str | None:
    """The command a wrapper runs, or None when ``head`` is no wrapper (or runs none)."""
    if head in ("bash", "sh", "zsh") and not [w for w in rest if not w.startswith("-")]:
        return ""  # an interactive shell
    if head in ("bash", "sh", "zsh") and "-c" in rest:
        index = rest.index("-c")
        return " ".join(rest[index + 1 : index + 2])
    verb = next((w for w in rest if w in ("exec", "debug", "rsh", "run")), None)
    if head in ("kubectl", "oc") and verb is not None and verb != "run":
        if "--" in rest:
            return shlex.join(rest[rest.index("--") + 1 :])
        return ""  # an interactive shell in a pod or on a node
    if head == "ssh" or head == "tsh" and rest[:1] == ["ssh"]:
        args = [w for w in (rest[1:] if head == "tsh" else rest)]
        positional: list[str] = []
        skip = False
        for word in args:
            if skip:
                skip = False
                continue
            if word.startswith("-"):
                skip = word in ("-i", "-p", "-l", "-o", "-J", "-F", "-L", "-R", "-D")
                continue
            positional.append(word)
        return " ".join(positional[1:])
    if head == "knife" and rest[:1] == ["ssh"]:
        positional = []
        args = iter(rest[1:])
        for word in args:
            if word in ("-C", "-a", "-x", "-i", "-p", "-e", "--concurrency", "--attribute"):
                next(args, None)
            elif not word.startswith("-"):
                positional.append(word)
        return " ".join(positional[1:])
    if head == "ansible" and "-a" in rest:
        return rest[rest.index("-a") + 1] if rest.index("-a") + 1 < len(rest) else ""
    if head in ("bundle", "envdir") and rest:
        return shlex.join(rest[1:]) if head == "envdir" or rest[0] == "exec" else None
    if head == "chroot" and rest:
        return shlex.join(rest[1:])
    if head == "nsenter":
        args = [w for w in rest if not w.startswith("-")]
        return shlex.join(args[1:]) if len(args) > 1 else ""
    if head == "gcloud" and "ssh" in rest:
        command = next((w for w in rest if w.startswith("--command=")), None)
        return command.split("=", 1)[1] if command else ""
    return None


def _special(head: str, rest: list[str], segment: str) -> tuple[str | None, str] | None:
    joined = " ".join(rest)
    if head == "curl":
        method = re.search(r"(?:-X\s*|--request[ =])['\"]?([A-Z]+)", segment)
        if method and method.group(1) in ("POST", "PUT", "DELETE", "PATCH"):
            return CHANGES, f"curl {method.group(1)}"
        if re.search(
            r"\s(?:-d|--data(?:-\w+)?|-F|--form|-T|--upload-file)\b", segment
        ) and not re.search(r"\s-G\b", segment):
            return CHANGES, "curl sends data (POST)"
        return READS, "curl GET"
    if head in ("redis-cli", "gitlab-redis-cli"):
        args = [w for w in rest if not w.startswith("-")]
        words = [w.lower() for w in rest]
        if "--bigkeys" in words or "--latency" in words or "--stat" in words or "--scan" in words:
            return READS, "redis-cli scan/stat"
        if _REDIS_CONFIG.search(joined):
            return CHANGES, "redis-cli config/client/cluster change"
        for word in args:
            if word.lower() in _REDIS_CHANGES:
                return CHANGES, f"redis-cli {word}"
        return READS, "redis-cli read"
    if head in ("psql", "gitlab-psql", "mysql"):
        return READS, f"{head} (its -c SQL decides, or an interactive session)"
    if head == "sed":
        return (
            (CHANGES, "sed -i")
            if re.search(r"\s-i\b|\s-i\S|--in-place", segment)
            else (READS, "sed")
        )
    if head == "find":
        if "-delete" in rest or re.search(r"-exec\s+(?:rm|mv|chmod|chown)\b", joined):
            return CHANGES, "find -delete / -exec rm"
        return READS, "find"
    if head == "sysctl":
        return (
            (CHANGES, "sysctl -w")
            if "-w" in rest or any("=" in w for w in rest)
            else (READS, "sysctl")
        )
    if head == "iptables" or head == "ip6tables":
        return (
            (CHANGES, "iptables change")
            if re.search(r"\s-(?:A|I|D|R|F|X|N|P)\b", segment)
            else (READS, "iptables -L")
        )
    if head == "ip":
        return (
            (CHANGES, "ip set/add/del")
            if re.search(r"\b(?:set|add|del|delete|flush|replace|change)\b", joined)
            else (READS, "ip show")
        )
    if head == "mount":
        return (
            (CHANGES, "mount")
            if [w for w in rest if not w.startswith("-")]
            else (READS, "mount (list)")
        )
    if head in ("mkdir", "touch", "cp"):
        targets = [w for w in rest if not w.startswith("-")]
        target = targets[-1] if targets else ""
        if target.startswith("/") and not target.startswith(("/tmp", "/var/tmp")) or ":" in target:
            return CHANGES, f"{head} into {target}"
        return READS, f"{head} in the working directory or /tmp"
    if head in ("scp", "rsync"):
        targets = [w for w in rest if not w.startswith("-")]
        remote = bool(targets) and ":" in targets[-1]
        return (CHANGES, f"{head} to a host") if remote else (READS, f"{head} from a host")
    if head == "gsutil" and "cp" in rest:
        targets = [w for w in rest if not w.startswith("-")]
        remote = targets[-1].startswith("gs://")
        return (CHANGES, "gsutil cp to a bucket") if remote else (READS, "gsutil cp to here")
    if head in (
        "flamegraph.pl",
        "stackcollapse-perf.pl",
        "pbcopy",
        "pbpaste",
        "socat",
        "sshuttle",
        "toolbox",
    ):
        return READS, f"{head} (local tool or shell)"
    if head == "etcd":
        return CHANGES, "starts an etcd member"
    if head in ("oc", "kubectl") and "can-i" in rest:
        return READS, f"{head} auth can-i (asks, changes nothing)"
    if head == "gcloud" and rest[:1] == ["config"]:
        return READS, "gcloud config (the operator's own settings)"
    if head in ("oc", "kubectl") and rest[:2] == ["adm", "upgrade"] and len(rest) == 2:
        return READS, "oc adm upgrade (shows the update status)"
    if head == "redis-prune":
        return (READS, "redis-prune --dry-run") if "--dry-run" in rest else (CHANGES, "redis-prune")
    if head in ("gitlab-rake", "gitlab-rails"):
        if (
            re.search(
                r"\b(?:check|info|doctor|status|console|dbconsole|list|show|verify)\b|:check\b",
                joined,
            )
            and "runner" not in rest
        ):
            return READS, f"{head} check/info/console"
        return None, f"{head} task: read it"
    if head == "kafka-consumer-groups" and "--reset-offsets" in rest:
        return (
            (CHANGES, "reset-offsets --execute")
            if "--execute" in rest
            else (READS, "reset-offsets dry run")
        )
    return None


def _label_sql(sql: str) -> tuple[str, str]:
    found = _SQL_CHANGES.search(sql)
    if found is not None:
        return CHANGES, f"SQL {found.group(0).split()[0]}"
    return READS, "SQL read (SELECT / SHOW / EXPLAIN / psql meta-command)"
