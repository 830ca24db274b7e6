"""A request's parts checked as openapi.yaml bounds them, before the core sees them: the shapes
of bodies (`shapes`: moves, new and imported games), programmed orders (`orders`), player names
(`names`), and the path, headers and body a route reads (`parts`)."""
