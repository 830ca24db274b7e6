"""What every process of the service reports: structured JSON logs (`logs`) and Prometheus
metrics (`metrics`). It imports nothing else of the project, so the core, the API, the worker and
the archive can all use it."""
