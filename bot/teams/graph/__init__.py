"""Teams alert posts through Microsoft Graph: the client, one subscription per switched-on channel,
the change-notification hook, and a notified message read into an alert-post job.
"""
