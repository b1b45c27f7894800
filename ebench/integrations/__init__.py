"""Adapters that run ebench where people already evaluate and train agents (Inspect AI, verifiers, datasets)."""
