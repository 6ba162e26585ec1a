"""Incident threads drafted into runbooks, reviewed, and delivered as pull requests (issue 40)."""
