"""Sources inside ``runbook serve``: the ``source.sync`` job on the queue, a sync run with its
sealed credential, a source's state in words, and the report of a source that keeps failing.
"""
