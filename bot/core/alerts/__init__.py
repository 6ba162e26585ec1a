"""Incident channels: whether a post is an alert (firing or resolved), what the bot remembers of
alerts it answered, per-channel switches, thread follow-up rules and the threads it follows.
"""
