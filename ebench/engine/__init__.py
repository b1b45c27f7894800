"""The generic domain engine: schema, seeded fill, validation/repair, worlds, tool registry."""
