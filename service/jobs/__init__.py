"""Background jobs: the loop that runs them (`runner.Runner`) and the base of the consumers of
the store's outbox (`runner.OutboxConsumer`). The worker runs its jobs and the archive's copier
with it; it imports nothing above the store."""
