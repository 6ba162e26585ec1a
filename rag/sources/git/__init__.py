"""The git kind of source: the git CLI run with the source's credential, a file's web link and
owner at a commit, and the reader that lists and reads a branch's runbook files.
"""
