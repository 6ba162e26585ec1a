"""The state-change table on real runbook commands, both ways: commands that delete, kill,
force-push, drop, scale to zero, reboot, stop or fail over are marked; read-only diagnosis is
not. Commands are quoted from the public collections in /work/shared/external (path given) and
the demo corpus."""

from __future__ import annotations

import pytest

from rag import answer_steps, code_changes_state, state_changes_in

CHANGING = [
    # prometheus-operator-runbooks/content/runbooks/kubernetes/KubeProxyDown.md
    ("kubectl delete pod -l k8s-app=kube-proxy -n kube-system", "deletes"),
    # openshift-runbooks/alerts/HighlyAvailableWorkloadIncorrectlySpread.md
    ('$ oc delete -n "$NS" pvc "$PVC"', "deletes"),
    # gitlab-com-runbooks/docs/monitoring/prometheus-pod-crashlooping.md
    ("rm -rf /prometheus/*.tmp", "deletes"),
    # gitlab-com-runbooks/docs/patroni/geo-patroni-cluster.md
    (
        "knife ssh roles:dr-base-db-patroni 'consul kv delete -recurse service/pg-ha-cluster'",
        "deletes",
    ),
    # gitlab-com-runbooks/docs/patroni/postgres-data-corruption.md
    ("DROP INDEX CONCURRENTLY index_on_users_lower_email", "drops"),
    # gitlab-com-runbooks/docs/monitoring/prometheus-pod-crashlooping.md: a shell opened in the
    # pod, its commands after the prompts zsh ("~ ") and busybox ("/prometheus $ ") print
    (
        " ~ kubectl -n monitoring exec -it prometheus-0 -c thanos-sidecar -- sh\n"
        "/ $ cd /prometheus/\n/prometheus $ rm -rf wal/",
        "deletes",
    ),
    ("[root@db-1 ~]# systemctl stop patroni", "stops"),
    # gitlab-com-runbooks/docs/uncategorized/workers-high-load.md
    (
        "knife ssh 'role:<cluster-role>' \"for p in \\$(ps -U git -o pid,cmd | grep <object-id> "
        "| grep -v grep | awk '{ print \\$1 }'); do kill -9 \\$p; done\"",
        "kills",
    ),
    # gitlab-com-runbooks (pg_stat_activity): the last-resort backend kill
    (
        "select pg_terminate_backend(pid) from pg_stat_activity where query ~* 'create index' "
        "and pid <> pg_backend_pid()",
        "kills",
    ),
    ("git push --force origin main", "force-pushes"),
    # gitlab-com-runbooks (sidekiq): scale a deployment to zero
    ("kubectl scale deployments/gitlab-sidekiq-memory-bound-v1 --replicas=0", "scales to zero"),
    # openshift-runbooks (ACM observability)
    (
        "oc scale deployment metrics-collector-deployment -n "
        "open-cluster-management-observability --replicas=0",
        "scales to zero",
    ),
    # gitlab-com-runbooks/docs/kube/k8s-operations.md
    (
        'kubectl drain --force --ignore-daemonsets --delete-local-data --grace-period=10 "$node"',
        "evicts pods",
    ),
    # openshift-runbooks/alerts/machine-config-operator/KubeletHealthState.md
    ("# systemctl reboot", "reboots"),
    # gitlab-com-runbooks/docs/ci-runners/linux/graceful-shutdown.md
    ("sudo /root/runner_upgrade.sh stop_and_reboot", "reboots"),
    # gitlab-com-runbooks/docs/frontend/haproxy.md
    ("$ sudo systemctl stop haproxy", "stops or restarts a service"),
    # gitlab-com-runbooks/docs/pages/gitlab-pages.md
    ("$ sudo gitlab-ctl restart gitlab-pages", "stops or restarts a service"),
    # corpus/acme/database/primary-failover.md
    (
        "patronictl -c /etc/patroni/patroni.yml failover pg-main --candidate pg-main-2 --force",
        "fails over",
    ),
    ("gitlab-patronictl switchover", "fails over"),
    # corpus/globex/database/primary-failover.md
    (
        "aws rds failover-db-cluster --db-cluster-identifier globex-ledger-prod",
        "fails over",
    ),
    # gitlab-com-runbooks/docs/patroni (rebuild a replica)
    (
        "gitlab-patronictl reinit pg11-ha-cluster patroni-XX-db-gprd.c.gitlab-production.internal",
        "rebuilds a node",
    ),
    # corpus/acme/kubernetes/node-disk-pressure.md
    ("sudo crictl rmi --prune", "deletes"),
    ("sudo truncate -s 0 /var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log", "empties"),
    # issue 38's known misses: a kill switch, a delete by pattern, an offset reset
    ("sbctl kill checkout.new-recommendations --env production", "kills"),
    ("redis-prune --host redis-cart.cache.svc --pattern 'price:*' --batch 1000", "deletes"),
    (
        "kafka-consumer-groups.sh --bootstrap-server localhost:9092 --group fulfilment "
        "--reset-offsets --to-datetime 2025-02-12T09:40:00.000 --topic orders --execute",
        "resets consumer offsets",
    ),
    # scaling up changes state too, it is only not the worst kind
    ("kubectl scale deployment web --replicas=3", "scales"),
    ("kubectl -n payments patch hpa payments-gateway --type merge -p '{}'", "changes cluster"),
    ("helm -n checkout rollback checkout-api 41", "deploys or rolls back"),
]

READ_ONLY = [
    # prometheus-operator-runbooks/content/runbooks/alertmanager/AlertmanagerClusterCrashlooping.md
    "kubectl get pod -l app=alertmanager",
    # prometheus-operator-runbooks/content/runbooks/alertmanager/AlertmanagerFailedReload.md
    "$ kubectl logs sts/alertmanager-main -c config-reloader",
    # prometheus-operator-runbooks/content/runbooks/alertmanager/AlertmanagerMembersInconsistent.md
    "$ kubectl describe svc alertmanager-main",
    "$ kubectl get events --field-selector 'involvedObject.kind=Node'",
    "$ kubectl top nodes",
    # openshift-runbooks/alerts/cluster-monitoring-operator/NodeClockNotSynchronising.md
    "systemctl status chronyd",
    # gitlab-com-runbooks/docs/postgres-dr-delayed/postgres-dr-replicas.md
    "gitlab-ctl status postgresql",
    # gitlab-com-runbooks/docs/patroni/geo-patroni-cluster.md
    "gitlab-patronictl list",
    # gitlab-com-runbooks/docs/consul/interaction.md
    "consul kv get service/gstg-pg12-patroni-registry/leader",
    # openshift etcd runbooks
    "$ etcdctl endpoint health -w table",
    "# etcdctl member list -w table",
    # corpus/acme/database/primary-failover.md
    "patronictl -c /etc/patroni/patroni.yml list pg-main",
    'psql -h pg-main.db.acme.internal -p 5000 -U healthcheck -c "SELECT pg_is_in_recovery();"',
    "redis-prune --host redis-cart.cache.svc --pattern 'price:*' --dry-run",
    "kafka-consumer-groups.sh --bootstrap-server localhost:9092 --group g --reset-offsets "
    "--to-earliest --topic orders",
    "ps -ef | grep umount",
    # a tool's own prompt is not a shell's: gitlab-com-runbooks/docs/uncategorized/yubikey.md
    "> gpg --card-edit\ngpg/card> admin\ngpg/card> passwd",
    # corpus/acme/payments/gateway-5xx.md
    "kubectl -n payments get pods -l app=payments-gateway -o wide",
    # corpus/acme/kubernetes/node-disk-pressure.md
    "sudo du -sh /var/log/pods/* 2>/dev/null | sort -h | tail -n 10",
    "sudo crictl images | wc -l",
    # openshift-runbooks (HighlyAvailableWorkloadIncorrectlySpread.md)
    '$ oc get nodes -o yaml | grep -E "^\\s+failure-domain.beta.kubernetes.io/zone" | uniq',
]


@pytest.mark.parametrize(("command", "does"), CHANGING)
def test_a_state_changing_runbook_command_is_marked_with_what_it_does(
    command: str, does: str
) -> None:
    changes = state_changes_in(command)
    assert changes and changes[0].startswith(does)


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_diagnosis_command_is_not_marked(command: str) -> None:
    assert state_changes_in(command) == ()


def test_only_quoted_code_is_read_never_the_prose_around_it() -> None:
    prose = "Do not delete the pods by hand: the ReplicaSet recreates them. Never rm -rf here."
    assert code_changes_state(prose) == ()
    assert code_changes_state("Restart it with `kubectl delete pod web-0`.") == ("deletes",)
    fenced = "Force it:\n```bash\npatronictl failover pg-main --force\n```\n[1]"
    assert code_changes_state(fenced) == ("fails over",)


def test_answer_steps_close_at_each_marker_and_keep_a_command_with_its_step() -> None:
    answer = (
        "Check the cluster. [1]\n"
        "Force it:\n```bash\npatronictl failover pg-main --force\n# not a marker [9]\n```\n"
        "[2]\nAlso see *Verification*: `patronictl list` shows the leader. [3]"
    )
    steps = answer_steps(answer)

    assert [step.numbers for step in steps] == [(1,), (2,), (3,)]
    assert [step.changes for step in steps] == [(), ("fails over",), ()]
    assert "\n".join(step.text for step in steps) == answer


def test_the_cli_text_answer_marks_a_state_changing_step_above_it_and_no_other() -> None:
    from rag.textout import marked_answer

    answer = (
        "Check the cluster:\n```bash\npatronictl list\n```\n[1]\n"
        "Force it:\n```bash\npatronictl failover pg-main --force\n```\n[2]"
    )
    lines = marked_answer(answer).split("\n")

    assert lines.count("⚠️ changes state (fails over)") == 1
    assert lines.index("⚠️ changes state (fails over)") == lines.index("Force it:") - 1
    assert "\n".join(line for line in lines if not line.startswith("⚠️")) == answer
