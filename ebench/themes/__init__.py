"""ebench.themes (see DESIGN.md)."""
