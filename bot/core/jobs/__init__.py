"""The durable work queue: every accepted piece of work is a ``jobs`` row before its ack; the worker
claims jobs with a lease, one answer per job however often it runs, the queue's metrics, the
database watch that notices an outage and its end, and rounds of periodic work.
"""
