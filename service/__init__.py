"""aos-rules: Age of Steam rules as a service (engine, store, HTTP API, board rendering)."""
