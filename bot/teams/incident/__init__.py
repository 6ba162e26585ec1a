"""Teams incident channels: channel messages without a mention, the channel switches (and their
CLI), and the jobs that answer alert posts and follow-ups unprompted.
"""
