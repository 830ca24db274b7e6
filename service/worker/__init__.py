"""The background half of the service: what happens between requests (`python -m service.worker`).

Jobs take their work from the store: the changes every commit queues in the outbox (see
service/store/base.py), and the clocks every commit sets. Several workers may run at once: an
outbox change goes to one consumer of each group, and one that a dead worker took is claimed by
another after a while; whatever a job does to a game goes through the game's compare-and-set.
"""
