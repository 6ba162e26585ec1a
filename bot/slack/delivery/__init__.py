"""Getting replies to Slack: posts and updates in threads, response_url replies, queued jobs'
replies, progress marks, the per-job Web API client and its retry policy.
"""
