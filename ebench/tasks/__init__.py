"""ebench.tasks (see DESIGN.md)."""
