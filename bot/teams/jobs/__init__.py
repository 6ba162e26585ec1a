"""Teams work on the queue: the request an activity leaves, the answer jobs, the one message a job
shows its cards in, and the typing indicator.
"""
