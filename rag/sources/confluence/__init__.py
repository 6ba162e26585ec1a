"""The Confluence kind of source: one HTTP client for Cloud (REST v2) and Data Center (REST v1),
a space's current pages with their versions, and a page read as a runbook.
"""
