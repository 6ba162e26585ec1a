"""Systems a tenant does not run: a question about one abstains, whatever words it shares.

"our mongodb replica set lost its primary, how do I force an election" shares replica,
primary and election with a Postgres/Patroni runbook, and the embedding puts them close
(issue 38: answered with a forced Patroni failover at cosine 0.34). What the question is
about is MongoDB, and no runbook of the tenant ever writes that name: nothing the runbooks say
was written for it. ``foreign_subjects`` names such products (database engines, queues,
proxies and meshes, cloud services, tools) from a fixed list of well-known product names,
by the tenant's own term statistics: a listed name counts only when no chunk of the tenant
holds it. Pure; the gate calls it before any model.

Names that are also ordinary words of on-call prose ("chef", "flux", "tempo", "helm",
"lambda") and names with common aliases a runbook may write instead ("postgres" for
"postgresql", "k8s" for "kubernetes", "es" for "elasticsearch") are left out: a false
abstention on a covered question costs more than an answer the logistic gate still weighs.
Chat and paging tools (Slack, PagerDuty, Opsgenie) are left out too: "who do I page on
PagerDuty" asks about escalation, not about PagerDuty; and so are the stores Prometheus writes
to (Thanos, Cortex, Mimir, VictoriaMetrics): "PrometheusRemoteWriteBehind … to thanos" is
about remote write, which the tenant covers (dev alert post ``pa15``).
"""

from __future__ import annotations

from collections.abc import Mapping

PRODUCTS = frozenset(
    """
    mongodb mongo mysql mariadb cassandra scylla scylladb couchbase couchdb cockroachdb
    yugabyte yugabytedb tidb clickhouse influxdb timescaledb neo4j dynamodb cosmosdb
    firestore bigtable spanner bigquery snowflake redshift aurora mssql hbase riak arangodb
    memcached redis valkey keydb
    kafka rabbitmq activemq nats jetstream pulsar kinesis zeromq nsq celery resque
    zookeeper consul nomad vault eureka
    elasticsearch opensearch solr meilisearch typesense algolia
    linkerd traefik envoy haproxy nginx caddy kong istio cilium calico
    jenkins argocd spinnaker terraform ansible puppet saltstack pulumi tekton circleci
    datadog newrelic splunk jaeger zipkin graylog kibana
    logstash fluentd fluentbit sentry dynatrace nagios zabbix icinga
    azure gcp aws ec2 gke eks aks cloudflare akamai fastly heroku openstack vmware vsphere
    esxi proxmox nutanix
    ceph minio glusterfs longhorn portworx kubevirt rancher keycloak okta auth0
    """.split()
)


def foreign_subjects(
    term_df: Mapping[str, int], term_words: Mapping[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """The listed product names the question writes (``term_words``: each question lexeme with
    the words that produced it) whose lexeme no chunk of the tenant holds (``term_df`` 0)."""
    found = {
        word
        for lexeme, df in term_df.items()
        if df == 0
        for word in term_words.get(lexeme, ())
        if word in PRODUCTS
    }
    return tuple(sorted(found))
