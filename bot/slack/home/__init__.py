"""Slack's App Home as the tenant's settings and health page: the view, its controls, the
add-a-source modal and the install lifecycle listeners."""
