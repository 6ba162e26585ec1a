"""Teams self-service: the organisation's settings in the app's personal chat (``settings``) as
Adaptive Cards that refresh in place, and installs (``installationUpdate``) as tenants."""
